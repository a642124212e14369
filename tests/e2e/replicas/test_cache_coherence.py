"""A warehouse change made through one replica is in force on every other replica for the very next request."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog

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


def test_deactivating_a_warehouse_on_one_replica_is_in_force_on_the_other_at_once(
    replicas: list[RunningCatalog], tmp_path: Path
) -> None:
    one, other = (httpx.Client(base_url=replica.base_url, timeout=30) for replica in replicas)
    profile = {"type": "file", "location": str(tmp_path / "sales")}
    created = one.post("/management/v1/warehouse", json={"warehouse-name": "sales", "storage-profile": profile})
    warehouse = created.json()["warehouse-id"]
    namespaces = f"/catalog/v1/{warehouse}/namespaces"
    results = []
    for _ in range(20):  # each round: the other replica has the warehouse cached, then it changes through `one`
        warm = other.get(namespaces).status_code
        deactivated = one.post(f"/management/v1/warehouse/{warehouse}/deactivate").status_code
        refused = other.get(namespaces)
        activated = one.post(f"/management/v1/warehouse/{warehouse}/activate").status_code
        served = other.get(namespaces).status_code
        results.append((warm, deactivated, refused.status_code, activated, served))

    assert created.status_code == 201, created.text
    assert results == [(200, 204, 403, 204, 200)] * 20
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
