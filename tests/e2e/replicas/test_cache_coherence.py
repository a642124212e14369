"""A warehouse change made through one replica is in force on every other replica for the very next request."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from catalog_es.store.secrets import generate_secrets_key
from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket

pytestmark = pytest.mark.replicas


@pytest.fixture
def replicas(pg_dsn: str, tmp_path: Path) -> Iterator[list[RunningCatalog]]:
    """Two `catalog-es serve` processes on one external PostgreSQL (each with its own warehouse cache)."""
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__LOG_LEVEL": "warning"}
    running = [start_catalog(tmp_path / "data", env)]
    try:
        running.append(start_catalog(tmp_path / "data", env))
        yield running
    finally:
        for catalog in running:
            stop_catalog(catalog)


def _deactivation_rounds(
    one: httpx.Client, other: httpx.Client, warehouse: str, path: str, rounds: int
) -> tuple[list[tuple[int, ...]], httpx.Response]:
    """Each round: `other` has the warehouse cached (GET `path`), then it is deactivated through `one`, `other`
    asked again, reactivated through `one`, `other` asked again. The statuses of each round, the last refusal."""
    results = []
    for _ in range(rounds):
        warm = other.get(path).status_code
        deactivated = one.post(f"/management/v1/warehouse/{warehouse}/deactivate").status_code
        refused = other.get(path)
        activated = one.post(f"/management/v1/warehouse/{warehouse}/activate").status_code
        served = other.get(path).status_code
        results.append((warm, deactivated, refused.status_code, activated, served))
    return results, refused


def test_deactivating_a_warehouse_on_one_replica_is_in_force_on_the_other_at_once(
    replicas: list[RunningCatalog], tmp_path: Path
) -> None:
    one, other = (httpx.Client(base_url=replica.base_url, timeout=30) for replica in replicas)
    profile = {"type": "file", "location": str(tmp_path / "sales")}
    created = one.post("/management/v1/warehouse", json={"warehouse-name": "sales", "storage-profile": profile})
    warehouse = created.json()["warehouse-id"]
    namespaces = f"/catalog/v1/{warehouse}/namespaces"
    results, refused = _deactivation_rounds(one, other, warehouse, namespaces, 20)

    assert created.status_code == 201, created.text
    assert results == [(200, 204, 403, 204, 200)] * 20
    assert refused.json()["error"]["type"] == "ForbiddenException"


def test_a_table_of_a_warehouse_deactivated_on_one_replica_is_refused_by_the_other_at_once(
    replicas: list[RunningCatalog], tmp_path: Path
) -> None:
    """loadTable takes the cached warehouse once its table statement's log head confirms it (no look first)."""
    one, other = (httpx.Client(base_url=replica.base_url, timeout=30) for replica in replicas)
    profile = {"type": "file", "location": str(tmp_path / "orders")}
    created = one.post("/management/v1/warehouse", json={"warehouse-name": "orders", "storage-profile": profile})
    warehouse = created.json()["warehouse-id"]
    prefix = f"/catalog/v1/{warehouse}"
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    assert one.post(f"{prefix}/namespaces", json={"namespace": ["n"]}).status_code == 200
    assert one.post(f"{prefix}/namespaces/n/tables", json={"name": "t", "schema": schema}).status_code == 200
    table = f"{prefix}/namespaces/n/tables/t"
    results, refused = _deactivation_rounds(one, other, warehouse, table, 10)

    assert results == [(200, 204, 403, 204, 200)] * 10
    assert refused.json()["error"]["type"] == "ForbiddenException"


def test_a_warehouse_deleted_on_one_replica_is_gone_on_the_other_at_once(
    replicas: list[RunningCatalog], tmp_path: Path
) -> None:
    one, other = (httpx.Client(base_url=replica.base_url, timeout=30) for replica in replicas)
    profile = {"type": "file", "location": str(tmp_path / "crm")}
    warehouse = one.post("/management/v1/warehouse", json={"warehouse-name": "crm", "storage-profile": profile})
    prefix = warehouse.json()["warehouse-id"]
    assert other.get(f"/catalog/v1/{prefix}/namespaces").status_code == 200  # cached there now
    deleted = one.delete(f"/management/v1/warehouse/{prefix}")
    gone = other.get(f"/catalog/v1/{prefix}/namespaces")

    assert deleted.status_code == 204
    assert gone.status_code == 404
    assert gone.json()["error"]["type"] == "NoSuchWarehouseException"


def test_a_credential_rotated_on_one_replica_is_the_one_the_other_vends_next(
    pg_dsn: str, tmp_path: Path, s3_endpoint: str
) -> None:
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__LOG_LEVEL": "warning",
        "CATALOG_ES__SECRETS_KEY": generate_secrets_key(),
    }
    replicas = [start_catalog(tmp_path / "data", env)]
    try:
        replicas.append(start_catalog(tmp_path / "data", env))
        one, other = (httpx.Client(base_url=replica.base_url, timeout=30) for replica in replicas)
        bucket = make_bucket(s3_endpoint)
        profile = {
            "type": "s3",
            "bucket": bucket,
            "region": REGION,
            "endpoint": s3_endpoint,
            "path-style-access": True,
            "flavor": "s3-compat",
            "share-static-credentials-with-clients": True,
        }
        credential = {
            "type": "s3",
            "credential-type": "access-key",
            "access-key-id": ACCESS_KEY_ID,
            "secret-access-key": SECRET_ACCESS_KEY,
        }
        body = {"warehouse-name": "lake", "storage-profile": profile, "storage-credential": credential}
        warehouse = one.post("/management/v1/warehouse", json=body).json()["warehouse-id"]
        prefix = f"/catalog/v1/{warehouse}"
        schema = {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
        }
        assert one.post(f"{prefix}/namespaces", json={"namespace": ["n"]}).status_code == 200
        assert one.post(f"{prefix}/namespaces/n/tables", json={"name": "t", "schema": schema}).status_code == 200
        vended = []
        for round_no in range(5):
            other.get(f"{prefix}/namespaces/n/tables/t").raise_for_status()  # the warehouse is cached there
            rotated = {**credential, "secret-access-key": f"rotated-{round_no}"}
            rotation = one.post(
                f"/management/v1/warehouse/{warehouse}/storage-credential", json={"new-storage-credential": rotated}
            )
            config = other.get(f"{prefix}/namespaces/n/tables/t").json()["config"]
            vended.append((rotation.status_code, config.get("s3.secret-access-key")))
    finally:
        for catalog in replicas:
            stop_catalog(catalog)

    assert vended == [(204, f"rotated-{round_no}") for round_no in range(5)]
