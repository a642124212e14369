"""pyiceberg 0.12 planning on the server reads what client-side planning reads: partitioned, unpartitioned,
v2 with position deletes, v3; the plan's files are the same set; random filters (hypothesis)."""

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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.expressions import (
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    Not,
    NotEqualTo,
    NotNull,
    Or,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestampType

from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.planning_tables import commit_manifests, position_delete_file

pytestmark = pytest.mark.e2e

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
    NestedField(4, "amount", LongType(), required=False),
)
SPEC = PartitionSpec(
    PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
    PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
)
# No null partition value: pyiceberg 0.12 cannot parse a `null` in a plan's partition tuple (api/README.md).
CATEGORIES = ["books", "games", "music", "toys"]


def batch(start: int, count: int) -> pa.Table:
    base = datetime(2024, 1, 1)
    return pa.Table.from_pylist(
        [
            {
                "id": i,
                "category": CATEGORIES[i % 4],
                "ts": base + timedelta(hours=7 * i),
                "amount": None if i % 11 == 0 else (i * 37) % 500,
            }
            for i in range(start, start + count)
        ],
        schema=pa.schema(
            [
                pa.field("id", pa.int64()),
                pa.field("category", pa.string()),
                pa.field("ts", pa.timestamp("us")),
                pa.field("amount", pa.int64()),
            ]
        ),
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, pg_admin_dsn: str) -> Iterator[RunningCatalog]:
    """One server for the module (the property test runs many scans against the same tables)."""
    with new_database(pg_admin_dsn) as dsn:
        running = start_catalog(tmp_path_factory.mktemp("planning") / "data", {**os.environ, "CATALOG_ES__PG_DSN": dsn})
        yield running
        stop_catalog(running)


@pytest.fixture(scope="module")
def client_side(server: RunningCatalog) -> Catalog:
    return load_catalog("client", type="rest", uri=server.catalog_uri, warehouse="demo")


@pytest.fixture(scope="module")
def server_side(server: RunningCatalog) -> Catalog:
    return load_catalog(
        "server", type="rest", uri=server.catalog_uri, warehouse="demo", **{"scan-planning-mode": "server"}
    )


@pytest.fixture(scope="module")
def tables(server: RunningCatalog, client_side: Catalog) -> dict[str, Table]:
    """partitioned (identity + day, several appends), unpartitioned, v2 with position deletes, v3."""
    client_side.create_namespace("plans")
    made: dict[str, Table] = {}
    partitioned = client_side.create_table("plans.partitioned", schema=SCHEMA, partition_spec=SPEC)
    for start in (0, 40, 80):
        partitioned.append(batch(start, 40))
    made["partitioned"] = partitioned
    flat = client_side.create_table("plans.flat", schema=SCHEMA)
    for start in (0, 50, 100, 150):
        flat.append(batch(start, 50))
    made["flat"] = flat
    deleted = client_side.create_table("plans.deletes", schema=SCHEMA, properties={"format-version": "2"})
    deleted.append(batch(0, 30))
    deleted.append(batch(30, 30))
    files = sorted(task.file.file_path for task in deleted.scan().plan_files())
    deletes = [position_delete_file(deleted, files[0], [0, 3, 5]), position_delete_file(deleted, files[1], [1])]
    commit_manifests(deleted, [], deletes)
    deleted.refresh()
    made["deletes"] = deleted
    # pyiceberg 0.12 writes no v3 manifests: the data goes in at v2, then the table is upgraded to v3.
    v3 = client_side.create_table("plans.v3", schema=SCHEMA, partition_spec=SPEC, properties={"format-version": "2"})
    v3.append(batch(0, 40))
    v3.append(batch(40, 40))
    _upgrade_to_v3(server, "plans", "v3")  # pyiceberg 0.12 refuses the update itself: sent over REST
    v3 = client_side.load_table("plans.v3")
    assert v3.format_version == 3
    made["v3"] = v3
    return made


def _upgrade_to_v3(server: RunningCatalog, namespace: str, name: str) -> None:
    with httpx.Client(base_url=f"{server.catalog_uri}/v1/", timeout=30) as http:
        prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
        update = {"updates": [{"action": "upgrade-format-version", "format-version": 3}], "requirements": []}
        committed = http.post(f"{prefix}/namespaces/{namespace}/tables/{name}", json=update)
        assert committed.status_code == 200, committed.text


def _rows(table: Table, row_filter: BooleanExpression, fields: tuple[str, ...] = ("*",)) -> list[dict[str, Any]]:
    return sorted(table.scan(row_filter=row_filter, selected_fields=fields).to_arrow().to_pylist(), key=repr)


def _files(table: Table, row_filter: BooleanExpression) -> set[tuple[str, frozenset[str]]]:
    return {
        (task.file.file_path, frozenset(d.file_path for d in task.delete_files))
        for task in table.scan(row_filter=row_filter).plan_files()
    }


def _pair(client_side: Catalog, server_side: Catalog, name: str) -> tuple[Table, Table]:
    local, remote = client_side.load_table(f"plans.{name}"), server_side.load_table(f"plans.{name}")
    assert not local.scan()._should_use_server_side_planning()
    assert remote.scan()._should_use_server_side_planning()
    return local, remote


FILTERS: list[BooleanExpression] = [
    AlwaysTrue(),
    EqualTo("category", "books"),
    And(EqualTo("category", "games"), GreaterThan("amount", 200)),
    Or(LessThan("id", 10), IsNull("amount")),
    GreaterThanOrEqual("ts", datetime(2024, 1, 20).isoformat()),
    In("id", [1, 2, 3, 150]),
]


@pytest.mark.parametrize("name", ["partitioned", "flat", "deletes", "v3"])
@pytest.mark.parametrize("row_filter", FILTERS, ids=repr)
def test_server_plan_reads_the_client_plans_rows_when_tables_differ_in_layout(
    client_side: Catalog, server_side: Catalog, tables: dict[str, Table], name: str, row_filter: BooleanExpression
) -> None:
    local, remote = _pair(client_side, server_side, name)
    assert _files(remote, row_filter) == _files(local, row_filter)
    assert _rows(remote, row_filter) == _rows(local, row_filter)


def test_server_plan_attaches_position_deletes_to_their_data_files(
    client_side: Catalog, server_side: Catalog, tables: dict[str, Table]
) -> None:
    local, remote = _pair(client_side, server_side, "deletes")
    with_deletes = [task for task in remote.scan().plan_files() if task.delete_files]
    assert len(with_deletes) == 2
    assert len(remote.scan().to_arrow()) == 60 - 4 == len(local.scan().to_arrow())


def test_server_plan_prunes_partitions_when_filter_is_selective(
    client_side: Catalog, server_side: Catalog, tables: dict[str, Table]
) -> None:
    local, remote = _pair(client_side, server_side, "partitioned")
    everything = _files(remote, AlwaysTrue())
    books = _files(remote, EqualTo("category", "books"))
    assert 0 < len(books) < len(everything) / 3
    assert _rows(remote, EqualTo("category", "books"), ("id", "amount")) == _rows(
        local, EqualTo("category", "books"), ("id", "amount")
    )


_columns = st.sampled_from(["id", "amount"])
_days = st.integers(0, 40)
_value = st.integers(0, 200)
_leaf = st.one_of(
    st.tuples(_columns, _value).map(lambda pair: EqualTo(*pair)),
    st.tuples(_columns, _value).map(lambda pair: NotEqualTo(*pair)),
    st.tuples(_columns, _value).map(lambda pair: LessThan(*pair)),
    st.tuples(_columns, _value).map(lambda pair: GreaterThan(*pair)),
    st.sampled_from(["books", "games", "music", "nope"]).map(lambda value: EqualTo("category", value)),
    st.sampled_from(["category", "amount"]).map(IsNull),
    st.sampled_from(["category", "amount"]).map(NotNull),
    _days.map(lambda day: GreaterThanOrEqual("ts", (datetime(2024, 1, 1) + timedelta(days=day)).isoformat())),
)
_filters = st.recursive(
    _leaf,
    lambda children: st.one_of(
        st.tuples(children, children).map(lambda pair: And(*pair)),
        st.tuples(children, children).map(lambda pair: Or(*pair)),
        children.map(Not),
    ),
    max_leaves=5,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row_filter=_filters, name=st.sampled_from(["partitioned", "flat", "deletes", "v3"]))
def test_server_plan_matches_client_plan_when_filter_is_random(
    client_side: Catalog, server_side: Catalog, tables: dict[str, Table], row_filter: BooleanExpression, name: str
) -> None:
    local, remote = _pair(client_side, server_side, name)
    assert _files(remote, row_filter) == _files(local, row_filter)
    assert _rows(remote, row_filter) == _rows(local, row_filter)


def test_planning_endpoints_are_advertised_and_unknown_plans_answer_404(
    server: RunningCatalog, tables: dict[str, Table]
) -> None:
    with httpx.Client(base_url=f"{server.catalog_uri}/v1/", timeout=30) as http:
        config = http.get("config", params={"warehouse": "demo"}).json()
        assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan" in config["endpoints"]
        prefix = config["defaults"]["prefix"]
        base = f"{prefix}/namespaces/plans/tables/partitioned"
        planned = http.post(f"{base}/plan", json={"filter": {"type": "eq", "term": "category", "value": "books"}})
        assert planned.status_code == 200, planned.text
        body = planned.json()
        assert body["status"] == "completed"
        assert body["plan-id"]
        # the partition decides `category`, so no residual; `amount` is left to every file's rows
        assert not any("residual-filter" in task for task in body["file-scan-tasks"])
        amounts = http.post(f"{base}/plan", json={"filter": {"type": "gt", "term": "amount", "value": 200}}).json()
        assert amounts["file-scan-tasks"], amounts
        assert all(task.get("residual-filter", {}).get("type") == "gt" for task in amounts["file-scan-tasks"]), amounts[
            "file-scan-tasks"
        ][0]
        fetched = http.get(f"{base}/plan/{body['plan-id']}")
        assert fetched.json()["status"] == "completed"
        other_table = http.get(f"{prefix}/namespaces/plans/tables/flat/plan/{body['plan-id']}")
        assert other_table.status_code == 404
        assert other_table.json()["error"]["type"] == "NoSuchPlanIdException"
        assert http.delete(f"{base}/plan/{body['plan-id']}").status_code == 204
        assert http.get(f"{base}/plan/{body['plan-id']}").status_code == 404
        bad_task = http.post(f"{base}/tasks", json={"plan-task": "nonsense"})
        assert bad_task.status_code == 404
        assert bad_task.json()["error"]["type"] == "NoSuchPlanTaskException"
        bad_filter = http.post(f"{base}/plan", json={"filter": {"type": "frobnicate"}})
        assert bad_filter.status_code == 400, bad_filter.text
        unknown = http.post(f"{base}/plan", json={"select": ["nope"]})
        assert unknown.status_code == 400, unknown.text


@pytest.fixture
def async_server(pg_dsn: str, tmp_path: Path) -> Iterator[RunningCatalog]:
    """A server that answers every uncached plan `submitted` (no wait) and pages 2 tasks at a time."""
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__SCAN_PLANNING__SYNC_SECONDS": "0",
        "CATALOG_ES__SCAN_PLANNING__PAGE_SIZE": "2",
    }
    running = start_catalog(tmp_path / "data", env)
    yield running
    stop_catalog(running)


def test_large_plan_is_submitted_then_polled_and_paged_with_plan_tasks(async_server: RunningCatalog) -> None:
    local = load_catalog("local", type="rest", uri=async_server.catalog_uri, warehouse="demo")
    local.create_namespace("plans")
    table = local.create_table("plans.paged", schema=SCHEMA, partition_spec=SPEC)
    table.append(batch(0, 40))
    local.create_table("plans.other", schema=SCHEMA)
    expected = {task.file.file_path for task in table.scan(row_filter=LessThan("id", 30)).plan_files()}
    assert len(expected) > 4
    with httpx.Client(base_url=f"{async_server.catalog_uri}/v1/", timeout=30) as http:
        prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
        base = f"{prefix}/namespaces/plans/tables/paged"
        request = {"filter": {"type": "lt", "term": "id", "value": 30}}
        submitted = http.post(f"{base}/plan", json=request).json()
        assert submitted["status"] == "submitted"
        plan_id = submitted["plan-id"]
        deadline = time.monotonic() + 30
        while (polled := http.get(f"{base}/plan/{plan_id}").json())["status"] == "submitted":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert polled["status"] == "completed"
        files = [task["data-file"]["file-path"] for task in polled["file-scan-tasks"]]
        assert len(files) == 2
        for plan_task in polled["plan-tasks"]:
            page = http.post(f"{base}/tasks", json={"plan-task": plan_task})
            assert page.status_code == 200, page.text
            files.extend(task["data-file"]["file-path"] for task in page.json()["file-scan-tasks"])
        assert sorted(files) == sorted(expected)
        other = f"{prefix}/namespaces/plans/tables/other/tasks"
        elsewhere = http.post(other, json={"plan-task": polled["plan-tasks"][0]})
        assert elsewhere.status_code == 404  # a plan task of another table answers like no plan task
        assert elsewhere.json()["error"]["type"] == "NoSuchPlanTaskException"
        again = http.post(f"{base}/plan", json=request).json()  # cached now: completed at once
        assert again["status"] == "completed"
        assert len(again["plan-tasks"]) == len(polled["plan-tasks"])
