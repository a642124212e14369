"""Iceberg views against a running catalog-es: pyiceberg 0.12's view API, and the rest raw over HTTP."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import (
    NamespaceNotEmptyError,
    NoSuchViewError,
    TableAlreadyExistsError,
    ViewAlreadyExistsError,
)
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import SCHEMA, Json, assert_error, create_namespace, create_table, ns, table_url
from tests.e2e.shared_server import module_catalog, module_server, warehouse, warehouse_rest  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e


VIEW_ROUTES = {
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
    "POST /v1/{prefix}/namespaces/{namespace}/register-view",
}


def local_path(location: str) -> Path:
    parts = urlsplit(location)
    assert parts.scheme == "file", location
    return Path(unquote(parts.path))


def view_version(sql: str, schema_id: int = 0, version_id: int = 1) -> Json:
    return {
        "version-id": version_id,
        "schema-id": schema_id,
        "timestamp-ms": 1_700_000_000_000 + version_id,
        "summary": {"engine-name": "e2e"},
        "representations": [{"type": "sql", "sql": sql, "dialect": "spark"}],
        "default-namespace": ["shop"],
    }


def view_url(rest: RestApi, namespace: str, name: str) -> str:
    return rest.url(f"namespaces/{ns(namespace)}/views/{quote(name, safe='')}")


def create_view(rest: RestApi, namespace: str, name: str, extra: Json | None = None):
    body = {"name": name, "schema": SCHEMA, "view-version": view_version("SELECT 1"), "properties": {}, **(extra or {})}
    return rest.http.post(rest.url(f"namespaces/{ns(namespace)}/views"), json=body)


def load_view(rest: RestApi, namespace: str, name: str) -> Json:
    response = rest.http.get(view_url(rest, namespace, name))
    assert response.status_code == 200, response.text
    body: Json = response.json()
    return body


def rename(rest: RestApi, kind: str, source: tuple[str, str], destination: tuple[str, str]):
    return rest.http.post(
        rest.url(f"{kind}/rename"),
        json={
            "source": {"namespace": [source[0]], "name": source[1]},
            "destination": {"namespace": [destination[0]], "name": destination[1]},
        },
    )


def view_names(rest: RestApi, namespace: str) -> list[str]:
    response = rest.http.get(rest.url(f"namespaces/{ns(namespace)}/views"))
    assert response.status_code == 200, response.text
    return [identifier["name"] for identifier in response.json()["identifiers"]]


# --- pyiceberg ---------------------------------------------------------------------------------


@pytest.fixture
def ice(catalog: RunningCatalog, warehouse: str) -> Catalog:  # noqa: F811
    return load_catalog("x", type="rest", uri=catalog.catalog_uri, warehouse=warehouse)


def test_pyiceberg_creates_lists_loads_drops_and_registers_views_when_server_advertises_them(ice: Catalog) -> None:
    ice.create_namespace("shop")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType()))
    version = ViewVersion(
        version_id=1,
        schema_id=0,
        timestamp_ms=1_700_000_000_000,
        summary={"engine-name": "pyiceberg"},
        representations=[ViewRepresentation(SQLViewRepresentation(type="sql", sql="SELECT * FROM t", dialect="spark"))],
        default_namespace=("shop",),
    )

    view = ice.create_view("shop.daily", schema, version, properties={"owner": "alice"})

    assert view.current_version().representations[0].root.sql == "SELECT * FROM t"
    assert view.schema() == schema
    assert view.properties == {"owner": "alice"}
    namespace_location = ice.load_namespace_properties("shop")["location"]
    assert view.location() == f"{namespace_location}/{view.uuid()}"
    assert ice.view_exists("shop.daily")
    assert ice.load_view("shop.daily").metadata == view.metadata
    assert ice.list_views("shop") == [("shop", "daily")]
    assert ice.list_tables("shop") == []
    with pytest.raises(ViewAlreadyExistsError):
        ice.create_view("shop.DAILY", schema, version)
    with pytest.raises(TableAlreadyExistsError):
        ice.create_table("shop.daily", schema)
    with pytest.raises(NamespaceNotEmptyError):
        ice.drop_namespace("shop")

    ice.drop_view("shop.daily")

    assert not ice.view_exists("shop.daily")
    with pytest.raises(NoSuchViewError):
        ice.load_view("shop.daily")
    with pytest.raises(NoSuchViewError):
        ice.drop_view("shop.daily")
    assert ice.list_views("shop") == []

    metadata_files = sorted(local_path(view.location()).glob("metadata/*.metadata.json"))
    assert len(metadata_files) == 1  # a dropped view's files stay, so it can be registered again
    registered = ice.register_view("shop.restored", metadata_files[0].as_uri())

    assert registered.metadata == view.metadata
    assert ice.list_views("shop") == [("shop", "restored")]


# --- raw REST ----------------------------------------------------------------------------------


def test_config_advertises_every_view_route_when_warehouse_is_known(rest: RestApi) -> None:
    endpoints = rest.http.get("config", params={"warehouse": rest.warehouse}).json()["endpoints"]

    assert {endpoint for endpoint in endpoints if "view" in endpoint} == VIEW_ROUTES


def test_replace_commits_new_version_and_rejects_stale_uuid_bad_updates_and_unknown_views(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    created = create_view(rest, "shop", "v").json()
    assert local_path(created["metadata-location"]).is_file()
    view_uuid = created["metadata"]["view-uuid"]
    schema_v2 = {**SCHEMA, "fields": [*SCHEMA["fields"], {"id": 3, "name": "n", "type": "int", "required": False}]}

    replaced = rest.http.post(
        view_url(rest, "shop", "v"),
        json={
            "requirements": [{"type": "assert-view-uuid", "uuid": view_uuid}],
            "updates": [
                {"action": "add-schema", "schema": schema_v2},
                {"action": "add-view-version", "view-version": view_version("SELECT 2", schema_id=-1, version_id=2)},
                {"action": "set-current-view-version", "view-version-id": -1},
                {"action": "set-properties", "updates": {"comment": "v2"}},
            ],
        },
    )

    assert replaced.status_code == 200, replaced.text
    body = replaced.json()
    assert body["metadata"]["current-version-id"] == 2
    assert [schema["schema-id"] for schema in body["metadata"]["schemas"]] == [0, 1]
    assert [entry["version-id"] for entry in body["metadata"]["version-log"]] == [1, 2]
    assert body["metadata-location"].split("/")[-1].startswith("00001-")
    assert local_path(body["metadata-location"]).is_file()
    assert load_view(rest, "shop", "V") == body

    stale = rest.http.post(
        view_url(rest, "shop", "v"),
        json={
            "requirements": [{"type": "assert-view-uuid", "uuid": "00000000-0000-0000-0000-000000000001"}],
            "updates": [{"action": "set-properties", "updates": {"comment": "lost"}}],
        },
    )
    assert_error(stale, 409, "CommitFailedException")
    unknown_action = rest.http.post(view_url(rest, "shop", "v"), json={"updates": [{"action": "add-snapshot"}]})
    assert_error(unknown_action, 400, "BadRequestException")
    assert load_view(rest, "shop", "v") == body

    for method in ("GET", "POST", "DELETE"):
        response = rest.http.request(method, view_url(rest, "shop", "nope"), json={"updates": []})
        assert_error(response, 404, "NoSuchViewException")
    assert rest.http.head(view_url(rest, "shop", "nope")).status_code == 404
    assert rest.http.head(view_url(rest, "shop", "v")).status_code == 204
    assert_error(rest.http.get(rest.url(f"namespaces/{ns('nope')}/views")), 404, "NoSuchNamespaceException")
    assert_error(create_view(rest, "nope", "v"), 404, "NoSuchNamespaceException")
    assert_error(create_view(rest, "shop", "w", {"location": "file:///elsewhere/w"}), 400, "BadRequestException")
    outside = rest.http.post(
        view_url(rest, "shop", "v"), json={"updates": [{"action": "set-location", "location": "file:///elsewhere/v"}]}
    )
    assert_error(outside, 400, "BadRequestException")
    assert load_view(rest, "shop", "v") == body


def test_views_and_tables_share_names_and_views_rename_across_namespaces_and_register(rest: RestApi) -> None:
    create_namespace(rest, "a")
    create_namespace(rest, "b")
    assert create_table(rest, "a", "t").status_code == 200
    assert create_view(rest, "a", "v").status_code == 200

    assert_error(create_view(rest, "a", "T"), 409, "AlreadyExistsException")
    assert_error(create_table(rest, "a", "V"), 409, "AlreadyExistsException")
    assert_error(rename(rest, "views", ("a", "v"), ("a", "t")), 409, "AlreadyExistsException")
    assert_error(rename(rest, "tables", ("a", "t"), ("a", "v")), 409, "AlreadyExistsException")
    assert_error(rename(rest, "views", ("a", "nope"), ("b", "w")), 404, "NoSuchViewException")
    assert_error(rename(rest, "views", ("a", "v"), ("nope", "w")), 404, "NoSuchNamespaceException")

    before = load_view(rest, "a", "v")
    assert rename(rest, "views", ("a", "v"), ("b", "w")).status_code == 204

    assert_error(rest.http.get(view_url(rest, "a", "v")), 404, "NoSuchViewException")
    assert load_view(rest, "b", "w") == before
    assert (view_names(rest, "a"), view_names(rest, "b")) == ([], ["w"])
    assert rename(rest, "views", ("b", "w"), ("b", "W")).status_code == 204
    assert view_names(rest, "b") == ["W"]

    assert rest.http.delete(view_url(rest, "b", "W")).status_code == 204
    register = rest.url(f"namespaces/{ns('a')}/register-view")
    metadata_location = before["metadata-location"]
    assert_error(
        rest.http.post(register, json={"name": "t", "metadata-location": metadata_location}),
        409,
        "AlreadyExistsException",
    )
    registered = rest.http.post(register, json={"name": "again", "metadata-location": metadata_location})
    assert registered.status_code == 200, registered.text
    assert registered.json()["metadata"] == before["metadata"]
    assert load_view(rest, "a", "again")["metadata-location"] == metadata_location
    assert_error(
        rest.http.post(register, json={"name": "twice", "metadata-location": metadata_location}),
        409,
        "AlreadyExistsException",
    )
    table_metadata = rest.http.get(table_url(rest, "a", "t")).json()["metadata-location"]
    assert_error(
        rest.http.post(register, json={"name": "x", "metadata-location": table_metadata}), 400, "BadRequestException"
    )


def test_view_pages_hold_every_view_once_when_views_are_created_while_paging(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "a_table").status_code == 200
    for i in range(7):
        assert create_view(rest, "shop", f"v{i}").status_code == 200
    assert_error(
        rest.http.get(rest.url(f"namespaces/{ns('shop')}/views"), params={"pageSize": "0"}), 400, "BadRequestException"
    )

    seen: list[str] = []
    params = {"pageToken": "", "pageSize": "3"}
    for page in range(10):
        body = rest.http.get(rest.url(f"namespaces/{ns('shop')}/views"), params=params).json()
        seen += [identifier["name"] for identifier in body["identifiers"]]
        if page == 0:  # inserted before and after the cursor while paging
            assert create_view(rest, "shop", "a_first").status_code == 200
            assert create_view(rest, "shop", "v3b").status_code == 200
        if not body.get("next-page-token"):
            break
        params["pageToken"] = body["next-page-token"]

    assert seen == ["v0", "v1", "v2", "v3", "v3b", "v4", "v5", "v6"]
    assert view_names(rest, "shop") == ["a_first", *seen]


def test_view_metadata_files_go_to_write_metadata_path_when_the_view_sets_it(rest: RestApi) -> None:
    create_namespace(rest, "meta")
    plain = create_view(rest, "meta", "plain").json()
    warehouse_dir = local_path(plain["metadata"]["location"]).parent.parent
    custom = warehouse_dir / "custom-view-metadata"

    created = create_view(rest, "meta", "v", {"properties": {"write.metadata.path": custom.as_uri()}})
    replaced = rest.http.post(
        view_url(rest, "meta", "v"), json={"updates": [{"action": "set-properties", "updates": {"comment": "v2"}}]}
    )
    outside = create_view(rest, "meta", "w", {"properties": {"write.metadata.path": "file:///elsewhere/meta"}})

    assert created.status_code == 200, created.text
    assert replaced.status_code == 200, replaced.text
    for body in (created.json(), replaced.json()):
        assert local_path(body["metadata-location"]).parent == custom
        assert local_path(body["metadata-location"]).is_file()
    assert sorted(path.name[:5] for path in custom.iterdir()) == ["00000", "00001"]
    assert_error(outside, 400, "BadRequestException")
    assert not Path("/elsewhere").exists()
