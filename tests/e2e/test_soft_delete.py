"""Soft delete end to end: drop, list as deleted, undrop, recursive namespace undrop, restore and expiration."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NoSuchTableError

from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, eventually, start_catalog, stop_catalog
from tests.e2e.rest_helpers import SCHEMA as REST_SCHEMA
from tests.e2e.test_views import view_version
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket, object_keys

pytestmark = pytest.mark.e2e

SCHEMA = pa.schema([("id", pa.int64())])
Json = dict[str, Any]


class Server:
    """One served catalog for the module, with a management client."""

    def __init__(self, running: RunningCatalog, root: Path) -> None:
        self.running, self.root = running, root
        self.api = httpx.Client(base_url=running.base_url, timeout=30)

    def warehouse(self, name: str, expiration_seconds: int, directory: str | None = None) -> tuple[str, Catalog]:
        """A soft-delete `file` warehouse; its id and a pyiceberg catalog on it."""
        body = {
            "warehouse-name": name,
            "storage-profile": {"type": "file", "location": str(self.root / (directory or name))},
            "delete-profile": {"type": "soft", "expiration-seconds": expiration_seconds},
        }
        created = self.api.post("/management/v1/warehouse", json=body)
        assert created.status_code == 201, created.text
        catalog = load_catalog(name, type="rest", uri=self.running.catalog_uri, warehouse=name)
        return str(created.json()["warehouse-id"]), catalog

    def deleted(self, warehouse_id: str, **params: str) -> list[Json]:
        response = self.api.get(f"/management/v1/warehouse/{warehouse_id}/deleted-tabulars", params=params)
        assert response.status_code == 200, response.text
        tabulars: list[Json] = response.json()["tabulars"]
        return tabulars

    def undrop(self, warehouse_id: str, *targets: Json, path: str = "deleted-tabulars") -> httpx.Response:
        return self.api.post(f"/management/v1/warehouse/{warehouse_id}/{path}/undrop", json={"targets": list(targets)})

    def catalog_url(self, warehouse_id: str, path: str) -> str:
        return f"/catalog/v1/{warehouse_id}/{path}"


@pytest.fixture(scope="module")
def server(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    work: Path = tmp_path_factory.mktemp("soft-delete")
    with new_database(pg_admin_dsn, "soft") as dsn:
        running = start_catalog(
            work / "data",
            {
                **os.environ,
                "CATALOG_ES__PG_DSN": dsn,
                "CATALOG_ES__NATS__ENABLED": "false",
                "CATALOG_ES__WAREHOUSE_DELETE_HOLD_SECONDS": "3600",
                "CATALOG_ES__SECRETS_KEY": generate_secrets_key(),  # the S3 warehouse's credential
            },
        )
        server = Server(running, work)
        yield server
        server.api.close()
        stop_catalog(running)


def _files(location: str) -> list[Path]:
    root = Path(location.removeprefix("file://").removeprefix("file:"))
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


def test_dropped_table_is_hidden_listed_as_deleted_and_readable_again_when_undropped(server: Server) -> None:
    warehouse_id, ice = server.warehouse("undrop", 3600)
    ice.create_namespace("ns")
    table = ice.create_table("ns.orders", schema=SCHEMA)
    table.append(pa.table({"id": [1, 2, 3]}))
    location = table.location()

    ice.drop_table("ns.orders")

    assert ("ns", "orders") not in ice.list_tables("ns")
    with pytest.raises(NoSuchTableError):
        ice.load_table("ns.orders")
    assert _files(location), "a soft drop keeps the files"
    [deleted] = server.deleted(warehouse_id)
    assert (deleted["id"], deleted["name"], deleted["namespace"], deleted["typ"]) == (
        str(table.metadata.table_uuid),
        "orders",
        ["ns"],
        "table",
    )
    assert deleted["deleted-by"] == "anonymous"
    assert deleted["expiration-date"] > deleted["deleted-at"]

    undropped = server.undrop(warehouse_id, {"type": "table", "id": deleted["id"]})

    assert undropped.status_code == 200, undropped.text
    assert server.deleted(warehouse_id) == []
    assert sorted(ice.load_table("ns.orders").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]


def test_undrop_needs_a_new_name_when_the_old_one_was_taken_meanwhile(server: Server) -> None:
    warehouse_id, ice = server.warehouse("taken", 3600)
    ice.create_namespace("ns")
    old = ice.create_table("ns.t", schema=SCHEMA)
    old.append(pa.table({"id": [7]}))
    ice.drop_table("ns.t")
    ice.create_table("ns.t", schema=SCHEMA)  # the name is free at once (Lakekeeper's behaviour)
    target = {"type": "table", "id": str(old.metadata.table_uuid)}

    refused = server.undrop(warehouse_id, target)
    renamed = server.undrop(warehouse_id, {**target, "name": "t_before"}, path="deleted_tabulars")  # the old alias

    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["type"] == "AlreadyExistsException"
    assert renamed.status_code == 200, renamed.text
    assert ice.load_table("ns.t_before").scan().to_arrow()["id"].to_pylist() == [7]
    assert ice.load_table("ns.t").scan().to_arrow().num_rows == 0


def test_undrop_answers_404_for_an_id_that_is_not_soft_dropped(server: Server) -> None:
    warehouse_id, ice = server.warehouse("missing", 3600)
    ice.create_namespace("ns")
    live = ice.create_table("ns.live", schema=SCHEMA)

    for target in ({"type": "table", "id": str(uuid.uuid4())}, {"type": "table", "id": str(live.metadata.table_uuid)}):
        response = server.undrop(warehouse_id, target)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["type"] == "NoSuchTableException"


def test_recursive_namespace_drop_hides_the_tree_and_one_undrop_brings_it_back(server: Server) -> None:
    warehouse_id, ice = server.warehouse("tree", 3600)
    ice.create_namespace("top")
    ice.create_namespace("top.child")
    ice.create_table("top.a", schema=SCHEMA).append(pa.table({"id": [1]}))
    ice.create_table("top.child.b", schema=SCHEMA).append(pa.table({"id": [2]}))
    view = {"name": "v", "schema": REST_SCHEMA, "view-version": view_version("SELECT 1"), "properties": {}}
    created = server.api.post(server.catalog_url(warehouse_id, "namespaces/top%1Fchild/views"), json=view)
    assert created.status_code == 200, created.text

    not_empty = server.api.delete(server.catalog_url(warehouse_id, "namespaces/top"))
    dropped = server.api.delete(server.catalog_url(warehouse_id, "namespaces/top"), params={"recursive": "true"})

    assert not_empty.status_code == 409, not_empty.text
    assert dropped.status_code == 204, dropped.text
    assert ice.list_namespaces() == []
    hidden = {(row["typ"], tuple(row["namespace"]), row["name"]) for row in server.deleted(warehouse_id)}
    assert hidden == {("table", ("top",), "a"), ("table", ("top", "child"), "b"), ("view", ("top", "child"), "v")}
    table_a = next(row for row in server.deleted(warehouse_id) if row["typ"] == "table" and row["name"] == "a")
    root = table_a["dropped-with-namespace"]
    single = server.undrop(warehouse_id, {"type": "table", "id": table_a["id"]})
    assert single.status_code == 400, single.text  # it comes back with its namespace only

    undropped = server.undrop(warehouse_id, {"type": "namespace", "id": root})

    assert undropped.status_code == 200, undropped.text
    assert {tuple(parts) for parts in ice.list_namespaces("top")} == {("top", "child")}
    assert ice.load_table("top.a").scan().to_arrow()["id"].to_pylist() == [1]
    assert ice.load_table("top.child.b").scan().to_arrow()["id"].to_pylist() == [2]
    assert server.api.get(server.catalog_url(warehouse_id, "namespaces/top%1Fchild/views/v")).status_code == 200
    assert server.deleted(warehouse_id) == []


def test_restore_points_a_table_back_at_an_earlier_metadata_file_of_its_own(server: Server) -> None:
    warehouse_id, ice = server.warehouse("restore", 3600)
    ice.create_namespace("ns")
    table = ice.create_table("ns.t", schema=SCHEMA)
    other = ice.create_table("ns.other", schema=SCHEMA)
    table.append(pa.table({"id": [1]}))
    first = ice.load_table("ns.t").metadata_location
    table.append(pa.table({"id": [2]}))
    url = f"/management/v1/warehouse/{warehouse_id}/table/{table.metadata.table_uuid}/restore"

    foreign = server.api.post(url, json={"metadata-location": other.metadata_location})
    restored = server.api.post(url, json={"metadata-location": first})

    assert foreign.status_code == 400, foreign.text
    assert restored.status_code == 200, restored.text
    reloaded = ice.load_table("ns.t")
    assert reloaded.metadata_location == first
    assert reloaded.scan().to_arrow()["id"].to_pylist() == [1]
    reloaded.append(pa.table({"id": [3]}))  # commits go on from the restored pointer
    assert sorted(ice.load_table("ns.t").scan().to_arrow()["id"].to_pylist()) == [1, 3]


def test_expired_drop_with_purge_removes_the_files_and_records_the_expiry(server: Server) -> None:
    warehouse_id, ice = server.warehouse("expire", 1)
    ice.create_namespace("ns")
    table = ice.create_table("ns.gone", schema=SCHEMA)
    table.append(pa.table({"id": [1]}))
    location = table.location()
    dropped = server.api.delete(
        server.catalog_url(warehouse_id, "namespaces/ns/tables/gone"), params={"purgeRequested": "true"}
    )
    assert dropped.status_code == 204, dropped.text
    assert _files(location)

    deadline = time.monotonic() + 60
    while (_files(location) or server.deleted(warehouse_id)) and time.monotonic() < deadline:
        time.sleep(0.5)

    assert server.deleted(warehouse_id) == []
    assert _files(location) == []
    history = server.api.get("/management/v1/events", params={"type": "table.expired", "warehouse": warehouse_id})
    assert history.status_code == 200, history.text
    expired = [
        event for event in history.json()["events"] if event["data"]["table_id"] == str(table.metadata.table_uuid)
    ]
    assert len(expired) == 1
    assert expired[0]["data"]["purge_requested"] is True


def test_warehouse_deleted_with_force_is_missing_until_undeleted_within_its_hold(server: Server) -> None:
    warehouse_id, ice = server.warehouse("held", 3600)
    ice.create_namespace("ns")
    ice.create_table("ns.kept", schema=SCHEMA).append(pa.table({"id": [5]}))
    rebase = server.api.post(f"/management/v1/warehouse/{warehouse_id}/server-side-rebase", json={"mode": "on"})
    assert rebase.status_code == 204, rebase.text

    deleted = server.api.delete(f"/management/v1/warehouse/{warehouse_id}", params={"force": "true"})

    assert deleted.status_code == 204, deleted.text
    assert server.api.get(f"/management/v1/warehouse/{warehouse_id}").status_code == 404
    assert server.api.get("/catalog/v1/config", params={"warehouse": "held"}).status_code == 404
    assert server.api.get(f"/management/v1/warehouse/{warehouse_id}/deleted-tabulars").status_code == 404
    same_place = server.api.post(
        "/management/v1/warehouse",
        json={
            "warehouse-name": "elsewhere",
            "storage-profile": {"type": "file", "location": str(server.root / "held")},
        },
    )
    replacement, _ = server.warehouse("held", 3600, "held-2")  # the name is free meanwhile, not the location
    taken = server.api.post(f"/management/v1/warehouse/{warehouse_id}/undelete", json={})
    undeleted = server.api.post(f"/management/v1/warehouse/{warehouse_id}/undelete", json={"name": "held-again"})
    again = server.api.post(f"/management/v1/warehouse/{warehouse_id}/undelete", json={})

    assert same_place.status_code == 400, same_place.text
    assert replacement != warehouse_id
    assert taken.status_code == 409, taken.text
    assert undeleted.status_code == 200, undeleted.text
    assert undeleted.json() == {"warehouse-id": warehouse_id, "name": "held-again"}
    assert again.status_code == 404, again.text
    back = load_catalog("held-again", type="rest", uri=server.running.catalog_uri, warehouse="held-again")
    assert back.load_table("ns.kept").scan().to_arrow()["id"].to_pylist() == [5]
    assert server.api.get(f"/management/v1/warehouse/{warehouse_id}").json()["server-side-rebase"] == "on"  # kept


def test_expired_drop_with_purge_removes_the_objects_of_an_s3_warehouse(server: Server, s3_endpoint: str) -> None:
    bucket = make_bucket(s3_endpoint)
    profile = {
        "type": "s3",
        "bucket": bucket,
        "key-prefix": "lake",
        "region": REGION,
        "endpoint": s3_endpoint,
        "path-style-access": True,
        "flavor": "s3-compat",
    }
    credential = {
        "type": "s3",
        "credential-type": "access-key",
        "access-key-id": ACCESS_KEY_ID,
        "secret-access-key": SECRET_ACCESS_KEY,
    }
    body = {
        "warehouse-name": "s3-soft",
        "storage-profile": profile,
        "storage-credential": credential,
        "delete-profile": {"type": "soft", "expiration-seconds": 1},
    }
    created = server.api.post("/management/v1/warehouse", json=body, timeout=60)
    assert created.status_code == 201, created.text
    keys = {"s3.access-key-id": ACCESS_KEY_ID, "s3.secret-access-key": SECRET_ACCESS_KEY}
    ice = load_catalog("s3-soft", type="rest", uri=server.running.catalog_uri, warehouse="s3-soft", **keys)
    ice.create_namespace("ns")
    table = ice.create_table("ns.gone", schema=SCHEMA)
    table.append(pa.table({"id": [1, 2]}))
    prefix = table.location().removeprefix(f"s3://{bucket}/") + "/"
    assert object_keys(s3_endpoint, bucket, prefix)

    ice.purge_table("ns.gone")

    assert eventually(lambda: not object_keys(s3_endpoint, bucket, prefix), timeout=60)
    warehouse_id = str(created.json()["warehouse-id"])
    assert server.deleted(warehouse_id) == []
    history = server.api.get("/management/v1/events", params={"type": "table.expired", "warehouse": warehouse_id})
    assert [event["data"]["table_id"] for event in history.json()["events"]] == [str(table.metadata.table_uuid)]


def test_events_name_an_undropped_table_by_the_name_it_was_undropped_under_when_renamed(server: Server) -> None:
    warehouse_id, ice = server.warehouse("events_undrop", 3600)
    ice.create_namespace("ns")
    old = ice.create_table("ns.t", schema=SCHEMA)
    ice.drop_table("ns.t")
    ice.create_table("ns.t", schema=SCHEMA)
    table_id = str(old.metadata.table_uuid)
    assert server.undrop(warehouse_id, {"type": "table", "id": table_id, "name": "t_before"}).status_code == 200
    ice.load_table("ns.t_before").transaction().set_properties(owner="alice").commit_transaction()

    def events(body: Json) -> list[Json]:
        response = server.api.post(server.catalog_url(warehouse_id, "events"), json={"page-size": 1000, **body})
        assert response.status_code == 200, response.text
        found: list[Json] = response.json()["events"]
        return found

    operations = [event["operation"] for event in events({"catalog-objects-by-uuid": [table_id]})]
    update = next(operation for operation in operations if operation["operation-type"] == "update-table")
    assert update["identifier"] == {"namespace": ["ns"], "name": "t_before"}
    by_new_name = events({"catalog-objects-by-name": [["ns", "t_before"]]})
    assert [event["operation"]["operation-type"] for event in by_new_name][-1] == "update-table"
