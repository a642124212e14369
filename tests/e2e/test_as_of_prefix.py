"""As-of warehouse prefixes end to end with pyiceberg: `demo@<time>` is the catalog as it was, read-only."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.e2e.conftest import RunningCatalog
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, type=pa.int64())})


def _catalog(running: RunningCatalog, warehouse: str):
    return load_catalog(warehouse, type="rest", uri=running.catalog_uri, warehouse=warehouse)


def test_a_warehouse_at_a_past_time_lists_and_loads_what_was_there_and_refuses_writes(catalog: RunningCatalog):
    now = _catalog(catalog, "demo")
    now.create_namespace("sales")
    orders = now.create_table("sales.orders", schema=SCHEMA)
    orders.append(_rows(1, 2))
    now.create_table("sales.old", schema=SCHEMA)
    time.sleep(0.01)
    before = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.01)
    orders.append(_rows(3))
    now.drop_table("sales.old")
    now.create_table("sales.new", schema=SCHEMA)
    now.rename_table("sales.orders", "sales.orders_v2")

    past = _catalog(catalog, f"demo@{before}")
    assert sorted(past.list_tables("sales")) == [("sales", "old"), ("sales", "orders")]
    assert sorted(past.load_table("sales.orders").scan().to_arrow()["id"].to_pylist()) == [1, 2]
    planned = load_catalog(
        "planned", type="rest", uri=catalog.catalog_uri, warehouse=f"demo@{before}", **{"scan-planning-mode": "server"}
    )
    orders_then = planned.load_table("sales.orders")
    assert orders_then.scan()._should_use_server_side_planning()  # the past is planned on the server too
    assert sorted(orders_then.scan().to_arrow()["id"].to_pylist()) == [1, 2]
    with pytest.raises(NoSuchTableError):
        past.load_table("sales.new")
    with pytest.raises(NotImplementedError):  # writes are not advertised, so pyiceberg does not even try
        past.create_namespace("nope")
    assert sorted(now.load_table("sales.orders_v2").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]

    config = httpx.get(f"{catalog.catalog_uri}/v1/config", params={"warehouse": f"demo@{before}"}).json()
    prefix = config["defaults"]["prefix"]
    warehouse_id, position = prefix.split("@")
    reads = ("/metrics", "/plan", "/tasks")  # POSTs that read: metrics reports and scan planning
    assert all(e.startswith(("GET ", "HEAD ")) or e.endswith(reads) for e in config["endpoints"])
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan" in config["endpoints"]
    same = _catalog(catalog, f"demo@{position}")  # a position names the same past
    assert sorted(same.list_tables("sales")) == [("sales", "old"), ("sales", "orders")]
    # A client that writes anyway is refused, whatever the write.
    base = f"{catalog.catalog_uri}/v1/{prefix}"
    for method, path, body in (
        ("POST", "namespaces", {"namespace": ["nope"]}),
        ("POST", "namespaces/sales/tables/orders", {"requirements": [], "updates": []}),
        ("DELETE", "namespaces/sales/tables/orders", None),
        ("POST", "events", {}),
    ):
        refused = httpx.request(method, f"{base}/{path}", json=body)
        assert "read-only" in assert_error(refused, 403, "ForbiddenException")
    assert sorted(now.load_table("sales.orders_v2").scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    future = httpx.get(f"{catalog.catalog_uri}/v1/{warehouse_id}@99999999/namespaces")
    assert "not reached" in assert_error(future, 400, "BadRequestException")
    bad = httpx.get(f"{catalog.catalog_uri}/v1/{warehouse_id}@yesterday/namespaces")
    assert "as-of position" in assert_error(bad, 400, "BadRequestException")
