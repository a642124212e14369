"""Lakekeeper parity against a running catalog-es: its management payloads, bootstrap check, locations, limits."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog_es.store.secrets import generate_secrets_key
from tests.e2e.conftest import RestApi, RunningCatalog, eventually
from tests.e2e.shared_server import module_catalog, module_server, shared_catalog, warehouse, warehouse_rest  # noqa: F401 - fixtures
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket

NIL = "00000000-0000-0000-0000-000000000000"


@pytest.fixture(scope="module")
def s3_catalog(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCatalog]:
    """One server with a secrets key (for S3 credentials) for the module's S3 tests, each on a bucket of its own."""
    data_dir = tmp_path_factory.mktemp("s3-catalog") / "data"
    settings = {"CATALOG_ES__SECRETS_KEY": generate_secrets_key()}
    with shared_catalog(pg_admin_dsn, data_dir, tmp_path_factory.getbasetemp(), settings) as running:
        yield running


def _unique(name: str) -> str:
    """`name` with a suffix no other test's warehouse has (the tests share a server)."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


def _lakekeeper_example(endpoint: str, bucket: str) -> dict[str, Any]:
    """Lakekeeper's examples/minimal/create-default-warehouse.json, with this test's bucket and endpoint."""
    return {
        "warehouse-name": "demo-lk",
        "project-id": NIL,
        "storage-profile": {
            "type": "s3",
            "bucket": bucket,
            "key-prefix": "initial-warehouse",
            "assume-role-arn": None,
            "endpoint": endpoint,
            "region": REGION,
            "path-style-access": True,
            "flavor": "minio",
            "sts-enabled": True,
        },
        "storage-credential": {
            "type": "s3",
            "credential-type": "access-key",
            "aws-access-key-id": ACCESS_KEY_ID,
            "aws-secret-access-key": SECRET_ACCESS_KEY,
        },
        "delete-profile": {"type": "soft", "expiration-seconds": 2592000},
    }


def test_lakekeeper_example_warehouse_payload_creates_a_working_warehouse(
    s3_catalog: RunningCatalog, s3_endpoint: str
) -> None:
    bucket = make_bucket(s3_endpoint)
    with httpx.Client(base_url=s3_catalog.base_url, timeout=60) as api:
        # Lakekeeper's test conftest: bootstrap only when /info says it is not bootstrapped yet.
        info = api.get("/management/v1/info")
        assert info.status_code == 200, info.text
        if not info.json()["bootstrapped"]:
            assert api.post("/management/v1/bootstrap", json={"accept-terms-of-use": True}).status_code == 204
        project = api.post("/management/v1/project", json={"project-name": f"project-{uuid.uuid4()}"})
        assert project.status_code == 201, project.text
        project_id = project.json()["project-id"]

        body = {**_lakekeeper_example(s3_endpoint, bucket), "project-id": project_id}
        body["storage-profile"]["storage-layout"] = {"type": "default"}
        body["storage-profile"]["legacy-md5-behavior"] = False
        created = api.post("/management/v1/warehouse", json=body)
        assert created.status_code == 201, created.text
        described = api.get(f"/management/v1/warehouse/{created.json()['warehouse-id']}").json()
        assert described["project-id"] == project_id
        assert described["storage-profile"]["flavor"] == "s3-compat"
        assert SECRET_ACCESS_KEY not in str(described)

    catalog = load_catalog(
        "lk",
        type="rest",
        uri=s3_catalog.catalog_uri,
        warehouse=f"{project_id}/demo-lk",
        **{"s3.access-key-id": ACCESS_KEY_ID, "s3.secret-access-key": SECRET_ACCESS_KEY},
    )
    catalog.create_namespace("ns")
    table = catalog.create_table("ns.t", schema=pa.schema([("id", pa.int64())]))
    assert table.location().startswith(f"s3://{bucket}/initial-warehouse/")
    table.append(pa.table({"id": [1, 2, 3]}))
    assert catalog.load_table("ns.t").scan().to_arrow().column("id").to_pylist() == [1, 2, 3]


def test_info_says_bootstrapped_once_serve_created_the_embedded_default(catalog: RunningCatalog) -> None:
    """With the allow-all authorizer, serve's default project and warehouse need no bootstrap call."""
    info = httpx.get(f"{catalog.base_url}/management/v1/info", timeout=30).json()
    assert info["bootstrapped"] is True
    assert info["default-project-id"] == NIL


def _s3_warehouse(api: httpx.Client, endpoint: str, bucket: str, name: str, **profile: Any) -> str:
    body = _lakekeeper_example(endpoint, bucket)
    body["warehouse-name"] = name
    body["storage-profile"].update({"key-prefix": name, **profile})
    created = api.post("/management/v1/warehouse", json=body)
    assert created.status_code == 201, created.text
    return str(created.json()["warehouse-id"])


def test_alternative_protocols_are_honoured_only_when_the_profile_allows_them(
    s3_catalog: RunningCatalog, s3_endpoint: str
) -> None:
    bucket = make_bucket(s3_endpoint)
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    with httpx.Client(base_url=s3_catalog.base_url, timeout=60) as api:
        strict_name, hadoop_name = _unique("strict"), _unique("hadoop")
        strict = _s3_warehouse(api, s3_endpoint, bucket, strict_name)
        hadoop = _s3_warehouse(api, s3_endpoint, bucket, hadoop_name, **{"allow-alternative-protocols": True})
        for warehouse_id in (strict, hadoop):
            assert api.post(f"/catalog/v1/{warehouse_id}/namespaces", json={"namespace": ["ns"]}).status_code == 200

        def create(warehouse_id: str, name: str, location: str) -> httpx.Response:
            body = {"name": name, "schema": schema, "location": location}
            return api.post(f"/catalog/v1/{warehouse_id}/namespaces/ns/tables", json=body)

        refused = create(strict, "t", f"s3a://{bucket}/{strict_name}/ns/t")
        assert refused.status_code == 400, refused.text
        assert "not a sub-location" in refused.json()["error"]["message"]

        for scheme in ("s3a", "s3n"):
            created = create(hadoop, f"t_{scheme}", f"{scheme}://{bucket}/{hadoop_name}/ns/t_{scheme}")
            assert created.status_code == 200, created.text
            assert created.json()["metadata"]["location"] == f"{scheme}://{bucket}/{hadoop_name}/ns/t_{scheme}"
            assert created.json()["metadata-location"].startswith(f"{scheme}://{bucket}/{hadoop_name}/ns/t_{scheme}/")
        # s3a://b/x and s3://b/x are one place: the second claim overlaps the first.
        taken = create(hadoop, "again", f"s3://{bucket}/{hadoop_name}/ns/t_s3a/data")
        assert taken.status_code == 400, taken.text
        assert "overlaps" in taken.json()["error"]["message"]

    catalog = load_catalog(
        "hadoop",
        type="rest",
        uri=s3_catalog.catalog_uri,
        warehouse=hadoop_name,
        **{"s3.access-key-id": ACCESS_KEY_ID, "s3.secret-access-key": SECRET_ACCESS_KEY},
    )
    table = catalog.load_table("ns.t_s3a")
    table.append(pa.table({"id": [7, 8]}))
    assert catalog.load_table("ns.t_s3a").scan().to_arrow().column("id").to_pylist() == [7, 8]


def test_namespaces_nest_up_to_the_maximum_depth_and_no_deeper(rest: RestApi) -> None:
    """Lakekeeper's limit of 5 levels is the default (`CATALOG_ES__MAX_NAMESPACE_DEPTH`)."""
    levels = ["a", "b", "c", "d", "e"]
    for depth in range(1, 6):
        created = rest.http.post(rest.url("namespaces"), json={"namespace": levels[:depth]})
        assert created.status_code == 200, created.text
    too_deep = rest.http.post(rest.url("namespaces"), json={"namespace": [*levels, "f"]})
    assert too_deep.status_code == 400, too_deep.text
    error = too_deep.json()["error"]
    assert error["code"] == 400
    assert error["type"] == "NamespaceDepthExceeded"
    assert error["message"] == "Namespace exceeds maximum depth of 5"  # Lakekeeper's text, which its tests assert
    missing = rest.http.get(rest.url(f"namespaces/{'%1F'.join([*levels, 'f'])}"))
    assert missing.status_code == 404  # nothing was written


def test_encryption_key_id_is_refused_with_lakekeeper_types_when_changed_or_removed(rest: RestApi) -> None:
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}
    assert rest.http.post(rest.url("namespaces"), json={"namespace": ["enc"]}).status_code == 200
    body = {"name": "t", "schema": schema, "properties": {"encryption.key-id": "key-1"}}
    assert rest.http.post(rest.url("namespaces/enc/tables"), json=body).status_code == 200

    def commit(update: dict[str, Any]) -> httpx.Response:
        return rest.http.post(rest.url("namespaces/enc/tables/t"), json={"requirements": [], "updates": [update]})

    same = commit({"action": "set-properties", "updates": {"encryption.key-id": "key-1"}})
    assert same.status_code == 200, same.text
    changed = commit({"action": "set-properties", "updates": {"encryption.key-id": "key-2"}})
    assert changed.status_code == 400, changed.text
    assert changed.json()["error"] == {
        "message": "Cannot modify immutable property 'encryption.key-id'",
        "type": "ImmutablePropertyModification",
        "code": 400,
    }
    removed = commit({"action": "remove-properties", "removals": ["encryption.key-id"]})
    assert removed.status_code == 400, removed.text
    assert removed.json()["error"] == {
        "message": "Cannot remove immutable property 'encryption.key-id'",
        "type": "ImmutablePropertyRemoval",
        "code": 400,
    }


def _files_below(location: str) -> list[Path]:
    root = Path(location.removeprefix("file://"))
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


def test_purge_by_default_is_a_warehouse_choice_and_the_spec_default_stays(
    catalog: RunningCatalog, tmp_path: Path
) -> None:
    """`purgeRequested` absent: kept (spec) unless the delete profile says `purge-by-default` (Lakekeeper-like)."""
    schema = pa.schema([("id", pa.int64())])
    with httpx.Client(base_url=catalog.base_url, timeout=30) as api:
        names = {"spec": _unique("spec"), "lk": _unique("lk")}
        for name, delete_profile in (("spec", None), ("lk", {"type": "hard", "purge-by-default": True})):
            body = {
                "warehouse-name": names[name],
                "storage-profile": {"type": "file", "location": str(tmp_path / name)},
                "delete-profile": delete_profile,
            }
            created = api.post("/management/v1/warehouse", json=body)
            assert created.status_code == 201, created.text
            described = api.get(f"/management/v1/warehouse/{created.json()['warehouse-id']}").json()
            assert described["delete-profile"] == (delete_profile or {"type": "hard"})

        locations: dict[str, str] = {}
        for name in ("spec", "lk"):
            pyiceberg = load_catalog(name, type="rest", uri=catalog.catalog_uri, warehouse=names[name])
            pyiceberg.create_namespace("ns")
            for table_name in ("dropped", "kept"):
                table = pyiceberg.create_table(f"ns.{table_name}", schema=schema)
                table.append(pa.table({"id": [1]}))
                locations[f"{name}.{table_name}"] = table.location()
            config = api.get("/catalog/v1/config", params={"warehouse": names[name]})
            prefix = config.json()["defaults"]["prefix"]
            dropped = api.delete(f"/catalog/v1/{prefix}/namespaces/ns/tables/dropped")  # no purgeRequested
            assert dropped.status_code == 204, dropped.text
            explicit = api.delete(f"/catalog/v1/{prefix}/namespaces/ns/tables/kept", params={"purgeRequested": False})
            assert explicit.status_code == 204, explicit.text

    assert _files_below(locations["spec.dropped"])  # the spec default: the data stays
    assert eventually(lambda: _files_below(locations["lk.dropped"]) == [])  # purge-by-default: purged after the drop
    assert _files_below(locations["lk.kept"])  # an explicit purgeRequested=false wins
    assert _files_below(locations["spec.kept"])


@pytest.mark.parametrize(
    ("layout", "namespace_path", "table_path"),
    [
        (None, "{ns_id}", "{ns_id}/{table_id}"),
        (
            {"type": "full-hierarchy", "namespace": "{name}", "tabular": "{name}-{uuid}"},
            "top/sub%20b",
            "top/sub%20b/t-{table_id}",
        ),
        (
            {"type": "parent-namespace-and-table", "namespace": "{name}", "table": "{uuid}"},
            "sub%20b",
            "sub%20b/{table_id}",
        ),
        ({"type": "tabular-only", "tabular": "{name}-{uuid}"}, "{ns_id}", "t-{table_id}"),
        ({"type": "table-only", "table": "{name}-{uuid}"}, "{ns_id}", "t-{table_id}"),  # the first spelling
    ],
)
def test_storage_layout_places_new_namespaces_and_tables(
    catalog: RunningCatalog, tmp_path: Path, layout: dict[str, str] | None, namespace_path: str, table_path: str
) -> None:
    base = tmp_path / "layout"
    profile: dict[str, Any] = {"type": "file", "location": str(base)}
    if layout is not None:
        profile["storage-layout"] = layout
    with httpx.Client(base_url=catalog.base_url, timeout=30) as api:
        body = {"warehouse-name": _unique("layout"), "storage-profile": profile}
        created = api.post("/management/v1/warehouse", json=body)
        assert created.status_code == 201, created.text
        prefix = f"/catalog/v1/{created.json()['warehouse-id']}"
        for namespace in (["top"], ["top", "sub b"]):
            assert api.post(f"{prefix}/namespaces", json={"namespace": namespace}).status_code == 200
        namespace = api.get(f"{prefix}/namespaces/top%1Fsub%20b").json()
        schema = {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}],
        }
        table = api.post(f"{prefix}/namespaces/top%1Fsub%20b/tables", json={"name": "t", "schema": schema})
        assert table.status_code == 200, table.text

    location = namespace["properties"]["location"]
    ns_id = location.rsplit("/", 1)[-1]
    table_id = table.json()["metadata"]["table-uuid"]
    assert location == f"{base.as_uri()}/{namespace_path.format(ns_id=ns_id)}"
    expected_table = f"{base.as_uri()}/{table_path.format(ns_id=ns_id, table_id=table_id)}"
    assert table.json()["metadata"]["location"] == expected_table
