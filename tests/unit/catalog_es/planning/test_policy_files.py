"""Policy files: a file is copied only when it may hold a row or column the policy hides, once, and an empty
copy drops its task."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from catalog_es.planning.planner import plan_scan, resolve_snapshot
from catalog_es.planning.policy import ReadPolicy
from catalog_es.planning.request import ScanRequest

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "dept", StringType(), required=False),
    NestedField(3, "salary", LongType(), required=False),
)
ENG = {"type": "eq", "term": "dept", "value": "eng"}


def _table(tmp_path: Path, *, partitioned: bool) -> Table:
    tmp_path.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("local", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}")
    catalog.create_namespace("hr")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "dept")) if partitioned else PartitionSpec()
    table = catalog.create_table("hr.people", schema=SCHEMA, partition_spec=spec)
    for dept in ("eng", "ops", "sales"):
        rows = [{"id": i, "dept": dept, "salary": i * 10} for i in range(4)]
        table.append(pa.Table.from_pylist(rows, schema=SCHEMA.as_arrow()))
    return table


def _tasks(table: Table, policy: ReadPolicy, select: list[str], row_filter: object = None) -> list[dict[str, object]]:
    request = resolve_snapshot(table.metadata, ScanRequest(select=select, filter=row_filter))
    planned = plan_scan(table.metadata, table.io, request, policy, 100)
    tasks: list[dict[str, object]] = msgspec.json.decode(planned.pages[0])["file-scan-tasks"]
    return tasks


def _path(task: dict[str, object]) -> str:
    data_file = task["data-file"]
    assert isinstance(data_file, dict)
    return str(data_file["file-path"])


def test_files_pass_whole_when_partition_or_bounds_prove_every_row_allowed(tmp_path: Path) -> None:
    partitioned = _table(tmp_path / "p", partitioned=True)
    rows_only = ReadPolicy.combined([(ENG, None)])
    assert rows_only is not None
    tasks = _tasks(partitioned, rows_only, ["id", "dept", "salary"])
    assert len(tasks) == 1  # ops and sales pruned by their partitions
    assert "/policy-files/" not in _path(tasks[0])  # dept=eng: the partition proves the policy
    flat = _table(tmp_path / "f", partitioned=False)  # one dept per file: the column bounds prove it
    assert [("/policy-files/" in _path(task)) for task in _tasks(flat, rows_only, ["id"])] == [False]


def test_file_is_copied_once_with_allowed_columns_when_policy_hides_one(tmp_path: Path) -> None:
    table = _table(tmp_path, partitioned=True)
    policy = ReadPolicy.combined([(ENG, ["id", "dept"])])
    assert policy is not None
    first = _tasks(table, policy, ["id"])
    assert len(first) == 1
    copied = _path(first[0])
    assert "/policy-files/" in copied
    with table.io.new_input(copied).open() as stream:
        written = pq.read_table(stream)
    assert written.column_names == ["id", "dept"]
    assert set(written["dept"].to_pylist()) == {"eng"}
    modified = Path(copied.removeprefix("file://")).stat().st_mtime_ns
    again = _tasks(table, policy, ["id", "dept"], {"type": "gt", "term": "id", "value": 1})
    assert _path(again[0]) == copied  # the same copy, found on storage, not written again
    assert Path(copied.removeprefix("file://")).stat().st_mtime_ns == modified
    assert again[0]["residual-filter"] == {"type": "gt", "term": "id", "value": 1}  # the client's own only


def test_task_is_dropped_when_its_copy_keeps_no_row(tmp_path: Path) -> None:
    table = _table(tmp_path, partitioned=False)
    policy = ReadPolicy.combined([({"type": "eq", "term": "salary", "value": 15}, None)])  # inside bounds, no row
    assert policy is not None
    assert _tasks(table, policy, ["id"]) == []
