"""A plan-id made on one replica is served by another (planned again from the signed id), only for its table;
a forged id answers like a missing one."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import LessThan
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestampType

from catalog_es.store.secrets import generate_secrets_key
from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog

pytestmark = pytest.mark.replicas

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(), name="id"))
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("category", pa.string()), pa.field("ts", pa.timestamp("us"))])


def _rows(start: int, count: int) -> pa.Table:
    base = datetime(2024, 1, 1)
    rows = [{"id": i, "category": "c", "ts": base + timedelta(hours=i)} for i in range(start, start + count)]
    return pa.Table.from_pylist(rows, schema=ARROW)


@pytest.fixture
def replicas(pg_dsn: str, tmp_path: Path) -> Iterator[list[RunningCatalog]]:
    """Two `catalog-es serve` processes on one PostgreSQL and one secrets key; every uncached plan answers
    `submitted` (no wait), two tasks a page."""
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__LOG_LEVEL": "warning",
        "CATALOG_ES__SECRETS_KEY": generate_secrets_key(),
        "CATALOG_ES__SCAN_PLANNING__SYNC_SECONDS": "0",
        "CATALOG_ES__SCAN_PLANNING__PAGE_SIZE": "2",
    }
    running = [start_catalog(tmp_path / "data", env)]
    try:
        running.append(start_catalog(tmp_path / "data", env))
        yield running
    finally:
        for catalog in running:
            stop_catalog(catalog)


def _poll(http: httpx.Client, url: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while (polled := http.get(url)).status_code == 200 and polled.json()["status"] == "submitted":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert polled.status_code == 200, polled.text
    return polled.json()  # type: ignore[no-any-return]


def _table(catalog: RunningCatalog) -> Table:
    ice = load_catalog("one", type="rest", uri=catalog.catalog_uri, warehouse="demo")
    ice.create_namespace("plans")
    table = ice.create_table("plans.paged", schema=SCHEMA, partition_spec=SPEC)
    table.append(_rows(0, 12))
    ice.create_table("plans.other", schema=SCHEMA)
    return table


def test_plan_id_from_one_replica_is_served_by_the_other_only_for_its_table(replicas: list[RunningCatalog]) -> None:
    one, other = (httpx.Client(base_url=f"{replica.catalog_uri}/v1/", timeout=30) for replica in replicas)
    table = _table(replicas[0])
    expected = sorted(task.file.file_path for task in table.scan(row_filter=LessThan("id", 9)).plan_files())
    prefix = one.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
    base = f"{prefix}/namespaces/plans/tables/paged"

    submitted = one.post(f"{base}/plan", json={"filter": {"type": "lt", "term": "id", "value": 9}}).json()
    plan_id = submitted["plan-id"]
    polled = _poll(other, f"{base}/plan/{plan_id}")  # never planned on `other`: planned there from the id
    assert polled["status"] == "completed"
    files = [task["data-file"]["file-path"] for task in polled["file-scan-tasks"]]
    for plan_task in polled["plan-tasks"]:
        page = one.post(f"{base}/tasks", json={"plan-task": plan_task})
        assert page.status_code == 200, page.text
        files.extend(task["data-file"]["file-path"] for task in page.json()["file-scan-tasks"])
    assert sorted(files) == expected

    elsewhere = other.get(f"{prefix}/namespaces/plans/tables/other/plan/{plan_id}")
    head, body, digest = plan_id.split(".")
    forged = other.get(f"{base}/plan/{head}.{body}.{digest[::-1]}")
    unsigned = other.get(f"{base}/plan/not-a-plan")
    for answer in (elsewhere, forged, unsigned):
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"]["type"] == "NoSuchPlanIdException"

    fresh = one.post(f"{base}/plan", json={"filter": {"type": "lt", "term": "id", "value": 5}}).json()["plan-id"]
    assert other.delete(f"{base}/plan/{fresh}").status_code == 204  # not held there: spent there all the same
    assert other.get(f"{base}/plan/{fresh}").status_code == 404
    assert other.delete(f"{base}/plan/{fresh}").status_code == 404
