"""A planner with as many distinct plans in flight as it may hold answers planTableScan 503 with Retry-After."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.e2e.conftest import start_catalog, stop_catalog

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


def _rows(start: int, count: int) -> pa.Table:
    return pa.Table.from_pylist(
        [{"id": i} for i in range(start, start + count)], schema=pa.schema([("id", pa.int64())])
    )


def test_plan_table_scan_answers_503_with_retry_after_when_the_planner_is_full(pg_dsn: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__LOG_LEVEL": "warning",
        "CATALOG_ES__SCAN_PLANNING__SYNC_SECONDS": "0",
        "CATALOG_ES__SCAN_PLANNING__MAX_QUEUED": "1",
    }
    catalog = start_catalog(tmp_path / "data", env)
    try:
        ice = load_catalog("busy", type="rest", uri=catalog.catalog_uri, warehouse="demo")
        ice.create_namespace("plans")
        table = ice.create_table("plans.many", schema=SCHEMA)
        for start in range(0, 60, 2):  # 30 manifests: each plan reads them all
            table.append(_rows(start, 2))
        with httpx.Client(base_url=f"{catalog.catalog_uri}/v1/", timeout=30) as http:
            prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
            url = f"{prefix}/namespaces/plans/tables/many/plan"

            def plan(bound: int) -> httpx.Response:  # distinct filters: distinct plans, none shared
                return http.post(url, json={"filter": {"type": "lt", "term": "id", "value": bound}})

            with ThreadPoolExecutor(8) as pool:
                answers = list(pool.map(plan, range(1, 25)))
    finally:
        stop_catalog(catalog)
    busy = [answer for answer in answers if answer.status_code == 503]
    assert {answer.status_code for answer in answers} <= {200, 503}, [a.text for a in answers]
    assert busy, "no plan was refused although one at a time may be planned"
    assert len(busy) < len(answers)
    assert busy[0].headers["Retry-After"] == "1"
    assert busy[0].json()["error"]["type"] == "ServiceUnavailableException"
    assert busy[0].json()["error"]["code"] == 503
