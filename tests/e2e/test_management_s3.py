"""S3 warehouses end to end: moto's S3 server, pyiceberg writing through the catalog, secrets kept out of the log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog_es.store.secrets import generate_secrets_key
from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket, object_keys

CREDENTIAL = {
    "type": "s3",
    "credential-type": "access-key",
    "access-key-id": ACCESS_KEY_ID,
    "secret-access-key": SECRET_ACCESS_KEY,
}


@pytest.fixture
def s3_catalog(pg_dsn: str, tmp_path: Path) -> Iterator[RunningCatalog]:
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__SECRETS_KEY": generate_secrets_key()}
    running = start_catalog(tmp_path / "data", env)
    yield running
    stop_catalog(running)


@pytest.fixture
def api(s3_catalog: RunningCatalog) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=s3_catalog.base_url, timeout=60) as client:
        yield client


def _profile(endpoint: str, bucket: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "s3",
        "bucket": bucket,
        "key-prefix": "lake/house",
        "region": REGION,
        "endpoint": endpoint,
        "path-style-access": True,
        "flavor": "s3-compat",
        **(extra or {}),
    }


def _create(api: httpx.Client, name: str, profile: dict[str, Any], credential: dict[str, Any] | None) -> httpx.Response:
    body = {"warehouse-name": name, "storage-profile": profile, "storage-credential": credential}
    return api.post("/management/v1/warehouse", json=body)


def _event_log_text(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT data::text, extensions::text FROM catalog_events").fetchall()
    return "\n".join(f"{data}\n{extensions}" for data, extensions in rows)


def test_s3_warehouse_with_pyiceberg(api: httpx.Client, s3_catalog: RunningCatalog, s3_endpoint: str) -> None:
    bucket = make_bucket(s3_endpoint)
    created = _create(api, "lake", _profile(s3_endpoint, bucket), CREDENTIAL)
    assert created.status_code == 201, created.text
    warehouse_id = created.json()["warehouse-id"]
    described = api.get(f"/management/v1/warehouse/{warehouse_id}").json()
    assert described["storage-profile"]["bucket"] == bucket
    assert SECRET_ACCESS_KEY not in str(described)
    assert described["storage-credential-fingerprint"]
    assert object_keys(s3_endpoint, bucket) == []  # the access probe cleaned up after itself

    # The client brings its own keys: the warehouse does not share static credentials.
    catalog = load_catalog(
        "s3",
        type="rest",
        uri=s3_catalog.catalog_uri,
        warehouse="lake",
        **{"s3.access-key-id": ACCESS_KEY_ID, "s3.secret-access-key": SECRET_ACCESS_KEY},
    )
    catalog.create_namespace("sales")
    table = catalog.create_table("sales.orders", schema=pa.schema([("id", pa.int64()), ("item", pa.string())]))
    assert table.location().startswith(f"s3://{bucket}/lake/house/")
    table.append(pa.table({"id": [1, 2, 3], "item": ["a", "b", "c"]}))
    read_back = catalog.load_table("sales.orders").scan().to_arrow().sort_by("id")
    assert read_back.column("id").to_pylist() == [1, 2, 3]
    assert read_back.column("item").to_pylist() == ["a", "b", "c"]

    keys = object_keys(s3_endpoint, bucket)
    assert keys
    assert all(key.startswith("lake/house/") for key in keys)
    assert any(key.endswith(".metadata.json") for key in keys)
    assert any(key.endswith(".parquet") for key in keys)

    loaded = httpx.get(f"{s3_catalog.catalog_uri}/v1/{warehouse_id}/namespaces/sales/tables/orders", timeout=30).json()
    assert loaded["config"]["s3.endpoint"] == s3_endpoint
    assert loaded["config"]["s3.region"] == REGION
    assert loaded["config"]["s3.path-style-access"] == "true"
    assert "s3.secret-access-key" not in loaded["config"]

    # Rotate the credential: a new fingerprint, and still no secret in the log.
    rotated = {**CREDENTIAL, "secret-access-key": "rotated-secret-value"}
    response = api.post(
        f"/management/v1/warehouse/{warehouse_id}/storage-credential", json={"new-storage-credential": rotated}
    )
    assert response.status_code == 204, response.text
    after = api.get(f"/management/v1/warehouse/{warehouse_id}").json()
    assert after["storage-credential-fingerprint"] != described["storage-credential-fingerprint"]
    assert catalog.load_table("sales.orders").scan().to_arrow().num_rows == 3

    log = _event_log_text(s3_catalog.env["CATALOG_ES__PG_DSN"])
    for secret in (SECRET_ACCESS_KEY, "rotated-secret-value"):
        assert secret not in log
    assert described["storage-credential-fingerprint"] in log  # events reference the secret by fingerprint


def test_shared_static_credentials_reach_clients(
    api: httpx.Client, s3_catalog: RunningCatalog, s3_endpoint: str
) -> None:
    bucket = make_bucket(s3_endpoint)
    profile = _profile(s3_endpoint, bucket, {"share-static-credentials-with-clients": True})
    assert _create(api, "shared", profile, CREDENTIAL).status_code == 201
    catalog = load_catalog("s3", type="rest", uri=s3_catalog.catalog_uri, warehouse="shared")
    catalog.create_namespace("n")
    table = catalog.create_table("n.t", schema=pa.schema([("id", pa.int64())]))
    table.append(pa.table({"id": [7]}))
    assert catalog.load_table("n.t").scan().to_arrow().column("id").to_pylist() == [7]


def test_storage_that_cannot_be_reached_is_refused(api: httpx.Client, s3_endpoint: str) -> None:
    missing = _create(api, "missing", _profile(s3_endpoint, "no-such-bucket-here"), CREDENTIAL)
    assert missing.status_code == 400, missing.text
    assert "no-such-bucket-here" in missing.json()["error"]["message"]

    closed = _create(api, "closed", _profile("http://127.0.0.1:9", "any-bucket"), CREDENTIAL)
    assert closed.status_code == 400, closed.text
    assert "127.0.0.1:9" in closed.json()["error"]["message"]

    bucket = make_bucket(s3_endpoint)
    assert _create(api, "first", _profile(s3_endpoint, bucket), CREDENTIAL).status_code == 201
    overlap = _create(api, "second", _profile(s3_endpoint, bucket, {"key-prefix": "lake/house/inner"}), CREDENTIAL)
    assert overlap.status_code == 400, overlap.text
    names = [item["name"] for item in api.get("/management/v1/warehouse").json()["warehouses"]]
    assert "missing" not in names
    assert "closed" not in names
    assert "second" not in names


def test_immutable_storage_fields(api: httpx.Client, s3_endpoint: str) -> None:
    bucket = make_bucket(s3_endpoint)
    warehouse_id = _create(api, "fixed", _profile(s3_endpoint, bucket), CREDENTIAL).json()["warehouse-id"]
    other_bucket = make_bucket(s3_endpoint)
    for change in ({"bucket": other_bucket}, {"key-prefix": "elsewhere"}):
        response = api.post(
            f"/management/v1/warehouse/{warehouse_id}/storage",
            json={"storage-profile": _profile(s3_endpoint, bucket, change)},
        )
        assert response.status_code == 400, response.text
    allowed = api.post(
        f"/management/v1/warehouse/{warehouse_id}/storage",
        json={"storage-profile": _profile(s3_endpoint, bucket, {"push-s3-delete-disabled": True})},
    )
    assert allowed.status_code == 204, allowed.text
    assert api.get(f"/management/v1/warehouse/{warehouse_id}").json()["storage-profile"]["push-s3-delete-disabled"]
