"""Server-side rebase (issue 19) with real pyiceberg writers: hot appends and the equivalence with serial runs."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from collections.abc import Callable

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import CommitFailedException, ValidationException
from pyiceberg.expressions import EqualTo
from pyiceberg.manifest import ManifestEntryStatus
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField

from catalog_es.metadata.rebase import PARTITION_SCOPED_PROPERTY
from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import (
    append_snapshot_updates,
    assert_error,
    create_namespace,
    create_table,
    load_table,
    main_snapshot_id,
    table_url,
)
from tests.e2e.shared_server import module_catalog, module_server, warehouse, warehouse_rest  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e

# pyiceberg 0.12 retries a failed commit itself; with no retries every 409 reaches the test.
NO_CLIENT_RETRY = {"commit.retry.num-retries": "0"}
REBASE = {"catalog-es.server-side-rebase": "true", **NO_CLIENT_RETRY}
# The owner's word that overwrites and deletes filter by partition: partition-disjointness alone then decides.
SCOPED = {**REBASE, PARTITION_SCOPED_PROPERTY: "true"}
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "part", LongType(), required=False),
    NestedField(3, "writer", LongType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="part"))
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("part", pa.int64()), pa.field("writer", pa.int64())])
OP_PROPERTY = "test-op"


def client(catalog: RunningCatalog, warehouse_name: str) -> Catalog:
    return load_catalog("x", type="rest", uri=catalog.catalog_uri, warehouse=warehouse_name)


def batch(ids: list[int], part: int, writer: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "part": part, "writer": writer} for i in ids], schema=ARROW)


def run_writers(count: int, work: Callable[[int], None]) -> None:
    """Run `work(i)` in `count` threads released together; re-raise the first failure."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            work(i)
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not errors, errors[0]


def rows_of(table: Table, snapshot_id: int | None = None) -> list[tuple[int, int, int]]:
    data = table.scan(snapshot_id=snapshot_id).to_arrow().to_pylist()
    return sorted((row["id"], row["part"], row["writer"]) for row in data)


def live_files(table: Table) -> list[tuple[int, int]]:
    """(partition, record count) of every live data file, sorted."""
    files = table.inspect.files().to_pylist()
    return sorted((file["partition"]["part"], file["record_count"]) for file in files if file["content"] == 0)


def assert_valid_chain(table: Table) -> list[int]:
    """The main branch is one parent chain with consecutive sequence numbers, every snapshot's totals true,
    and every live file carrying the sequence number of the snapshot that added it; returns the chain."""
    metadata = table.metadata
    chain = []
    snapshot = metadata.current_snapshot()
    while snapshot is not None:
        chain.append(snapshot)
        snapshot = metadata.snapshot_by_id(snapshot.parent_snapshot_id) if snapshot.parent_snapshot_id else None
    chain.reverse()
    assert [s.sequence_number for s in chain] == list(range(1, len(chain) + 1))
    assert metadata.last_sequence_number == len(chain)
    for snapshot in chain:
        assert snapshot.summary is not None
        assert int(snapshot.summary["total-records"]) == len(rows_of(table, snapshot.snapshot_id))
    added_at = {s.snapshot_id: s.sequence_number for s in chain}
    entries = table.inspect.entries().to_pylist()
    assert entries
    for entry in entries:  # added and existing entries name the snapshot that added the file (deleted ones: removed it)
        if entry["status"] != ManifestEntryStatus.DELETED.value:
            assert entry["sequence_number"] == added_at[entry["snapshot_id"]], entry
    head = chain[-1]
    assert head.summary is not None
    assert int(head.summary["total-data-files"]) == len(live_files(table))
    return [s.snapshot_id for s in chain]


def test_every_append_lands_without_a_conflict_when_twelve_writers_share_one_table(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    ice = client(catalog, warehouse)
    ice.create_namespace("hot")
    ice.create_table("hot.events", schema=SCHEMA, partition_spec=SPEC, properties=REBASE)
    # every partition has data: a first append into an empty one that races another there keeps its 409
    # (test_stale_overwrite_that_deleted_nothing_keeps_its_409_when_its_partition_was_filled_since)
    seeded = [(-1 - part, part, -1) for part in range(3)]
    for row_id, part, writer in seeded:
        ice.load_table("hot.events").append(batch([row_id], part=part, writer=writer))
    writers, appends = 12, 5
    conflicts: list[str] = []

    def append(writer: int) -> None:
        table = client(catalog, warehouse).load_table("hot.events")
        for i in range(appends):
            ids = [writer * 1000 + i * 10 + j for j in range(3)]
            try:
                table.append(batch(ids, part=i % 3, writer=writer))
            except CommitFailedException as exc:
                conflicts.append(str(exc))
                raise

    run_writers(writers, append)

    assert conflicts == []
    table = ice.load_table("hot.events")
    expected = sorted(
        [(w * 1000 + i * 10 + j, i % 3, w) for w in range(writers) for i in range(appends) for j in range(3)] + seeded
    )
    assert rows_of(table) == expected
    assert len(assert_valid_chain(table)) == writers * appends + len(seeded)


def test_stale_append_is_rebased_unless_the_table_opted_out(catalog: RunningCatalog, warehouse: str) -> None:  # noqa: F811
    ice = client(catalog, warehouse)
    ice.create_namespace("cold")
    opted_out = {"catalog-es.server-side-rebase": "false", **NO_CLIENT_RETRY}
    ice.create_table("cold.events", schema=SCHEMA, partition_spec=SPEC, properties=opted_out)
    stale = client(catalog, warehouse).load_table("cold.events")
    ice.load_table("cold.events").append(batch([1], part=0, writer=0))

    with pytest.raises(CommitFailedException, match="Requirement failed: branch main"):
        stale.append(batch([2], part=1, writer=1))

    with ice.load_table("cold.events").transaction() as opting_back:
        opting_back.remove_properties("catalog-es.server-side-rebase")  # the default setting, `on`, decides
    stale.append(batch([3], part=1, writer=1))  # its base is two commits behind now

    table = ice.load_table("cold.events")
    assert rows_of(table) == [(1, 0, 0), (3, 1, 1)]
    assert_valid_chain(table)


def test_stale_overwrite_is_rebased_only_when_its_partition_was_untouched(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    ice = client(catalog, warehouse)
    ice.create_namespace("hot")
    ice.create_table("hot.events", schema=SCHEMA, partition_spec=SPEC, properties=SCOPED)
    ice.load_table("hot.events").append(batch([1, 2], part=0, writer=0))
    ice.load_table("hot.events").append(batch([3], part=1, writer=0))
    stale_disjoint, stale_same = ice.load_table("hot.events"), ice.load_table("hot.events")
    ice.load_table("hot.events").append(batch([4], part=1, writer=1))

    base = stale_disjoint.metadata.current_snapshot_id
    moved_to = ice.load_table("hot.events").metadata.current_snapshot_id

    stale_disjoint.overwrite(batch([5], part=0, writer=2), overwrite_filter=EqualTo("part", 0))
    with pytest.raises(CommitFailedException, match="Requirement failed: branch main"):
        stale_same.overwrite(batch([6], part=1, writer=3), overwrite_filter=EqualTo("part", 1))

    table = ice.load_table("hot.events")
    assert rows_of(table) == [(3, 1, 0), (4, 1, 1), (5, 0, 2)]
    assert_valid_chain(table)
    in_hot = {"warehouse": warehouse, "namespace": "hot"}  # this test's namespace, not its namesakes elsewhere
    events = httpx.get(f"{catalog.base_url}/management/v1/events", params=in_hot).json()["events"]
    commits = [json.loads(e["data"]) if isinstance(e["data"], str) else e["data"] for e in events]
    rebased = [data["rebased"] for data in commits if "rebased" in data]
    assert rebased == [{"ref": "main", "original_base_snapshot_id": base, "new_parent_snapshot_id": moved_to}]
    history = httpx.get(f"{catalog.base_url}/management/v1/events/history/table-{table.metadata.table_uuid}").json()
    shown = [change["summary"]["rebased"] for change in history["changes"] if "rebased" in change.get("summary", {})]
    assert shown == [{"ref": "main", "original-base-snapshot-id": base, "new-parent-snapshot-id": moved_to}]


def test_stale_overwrite_whose_filter_reaches_a_concurrent_append_is_not_rebased_past_it(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    ice = client(catalog, warehouse)
    ice.create_namespace("hot")
    for name in ("events", "serial"):
        ice.create_table(f"hot.{name}", schema=SCHEMA, partition_spec=SPEC, properties=REBASE)
        ice.load_table(f"hot.{name}").append(batch([1], part=0, writer=0))
    stale = client(catalog, warehouse).load_table("hot.events")
    ice.load_table("hot.events").append(batch([5], part=1, writer=1))
    serial = ice.load_table("hot.serial")
    serial.append(batch([5], part=1, writer=1))
    serial.overwrite(batch([2], part=0, writer=2), overwrite_filter="id < 100")

    # Its filter covers part 1 too, where it removed nothing; the server cannot see the filter, and a commit
    # since the base added data, so the stale overwrite keeps its 409 and the client's retry gives the serial result.
    with pytest.raises(CommitFailedException, match="Requirement failed: branch main"):
        stale.overwrite(batch([2], part=0, writer=2), overwrite_filter="id < 100")
    stale.refresh().overwrite(batch([2], part=0, writer=2), overwrite_filter="id < 100")
    assert rows_of(ice.load_table("hot.events")) == rows_of(ice.load_table("hot.serial")) == [(2, 0, 2)]


def test_stale_overwrite_that_deleted_nothing_keeps_its_409_when_its_partition_was_filled_since(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    ice = client(catalog, warehouse)
    ice.create_namespace("hot")
    for name in ("events", "serial"):
        ice.create_table(f"hot.{name}", schema=SCHEMA, partition_spec=SPEC, properties=REBASE)
        ice.load_table(f"hot.{name}").append(batch([1], part=0, writer=0))
    stale = client(catalog, warehouse).load_table("hot.events")  # partition 1 is empty at its base
    ice.load_table("hot.events").append(batch([5], part=1, writer=1))
    serial = ice.load_table("hot.serial")
    serial.append(batch([5], part=1, writer=1))
    serial.overwrite(batch([2], part=1, writer=2), overwrite_filter=EqualTo("part", 1))

    # Its delete matched nothing, so pyiceberg sends only the append: rebased, row 5 would survive the overwrite.
    with pytest.raises(CommitFailedException, match="Requirement failed: branch main"):
        stale.overwrite(batch([2], part=1, writer=2), overwrite_filter=EqualTo("part", 1))
    stale.refresh().overwrite(batch([2], part=1, writer=2), overwrite_filter=EqualTo("part", 1))
    assert rows_of(ice.load_table("hot.events")) == rows_of(ice.load_table("hot.serial")) == [(1, 0, 0), (2, 1, 2)]


def test_stale_append_to_a_partition_that_had_data_is_rebased_past_an_append_there(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    ice = client(catalog, warehouse)
    ice.create_namespace("hot")
    ice.create_table("hot.events", schema=SCHEMA, partition_spec=SPEC, properties=REBASE)
    ice.load_table("hot.events").append(batch([1], part=1, writer=0))
    stale = client(catalog, warehouse).load_table("hot.events")
    ice.load_table("hot.events").append(batch([2], part=1, writer=1))

    stale.append(batch([3], part=1, writer=2))

    assert rows_of(ice.load_table("hot.events")) == [(1, 1, 0), (2, 1, 1), (3, 1, 2)]


def test_stale_delete_is_rebased_when_nothing_since_its_base_added_data(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    ice = client(catalog, warehouse)
    ice.create_namespace("hot")
    ice.create_table("hot.events", schema=SCHEMA, partition_spec=SPEC, properties=REBASE)
    ice.load_table("hot.events").append(batch([1], part=0, writer=0))
    ice.load_table("hot.events").append(batch([2], part=1, writer=0))
    ice.load_table("hot.events").append(batch([3], part=2, writer=0))
    stale = client(catalog, warehouse).load_table("hot.events")
    ice.load_table("hot.events").delete(EqualTo("part", 1))  # removes a file, adds none

    stale.delete(EqualTo("part", 2))

    assert rows_of(ice.load_table("hot.events")) == [(1, 0, 0)]
    assert_valid_chain(ice.load_table("hot.events"))


# --- equivalence with the same operations serialised ------------------------------------------------

Op = tuple[str, str, int, list[int]]  # (op id, kind, partition, ids)
PARTITIONS = 4


def random_ops(rng: random.Random, writer: int, count: int) -> list[Op]:
    ops: list[Op] = []
    for i in range(count):
        kind = rng.choices(["append", "overwrite", "delete"], weights=[6, 2, 1])[0]
        ids = [writer * 10_000 + i * 100 + j for j in range(rng.randint(1, 4))]
        ops.append((f"{writer}-{i}", kind, rng.randrange(PARTITIONS), ids))
    return ops


def apply_op(table: Table, op: Op, writer: int) -> None:
    op_id, kind, part, ids = op
    properties = {OP_PROPERTY: op_id}
    if kind == "append":
        table.append(batch(ids, part, writer), snapshot_properties=properties)
    elif kind == "overwrite":
        table.overwrite(
            batch(ids, part, writer), overwrite_filter=EqualTo("part", part), snapshot_properties=properties
        )
    else:
        table.delete(EqualTo("part", part), snapshot_properties=properties)


def committed_order(table: Table, chain: list[int]) -> list[str]:
    """The op ids in the order the main branch took them (an overwrite's two snapshots count once)."""
    order: list[str] = []
    for snapshot_id in chain:
        snapshot = table.metadata.snapshot_by_id(snapshot_id)
        assert snapshot is not None
        assert snapshot.summary is not None
        op_id = snapshot.summary[OP_PROPERTY]
        if not order or order[-1] != op_id:
            order.append(op_id)
    return order


@pytest.mark.parametrize(("seed", "properties"), [(7, SCOPED), (19, REBASE)], ids=["partition-scoped", "default"])
def test_concurrent_random_writes_equal_the_same_writes_serialised(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
    seed: int,
    properties: dict[str, str],
) -> None:
    writers, per_writer = 5, 8
    rng = random.Random(seed)
    plans = {w: random_ops(rng, w, per_writer) for w in range(writers)}
    ice = client(catalog, warehouse)
    ice.create_namespace("eq")
    ice.create_table("eq.hot", schema=SCHEMA, partition_spec=SPEC, properties=properties)
    retries: Counter[str] = Counter()
    messages: list[str] = []
    appends_retried_on_a_filled_partition: list[str] = []

    def write(writer: int) -> None:
        table = client(catalog, warehouse).load_table("eq.hot")
        for op in plans[writer]:
            while True:  # a client-side retry, as Iceberg's own: refresh and redo
                try:
                    apply_op(table, op, writer)
                    break
                except (CommitFailedException, ValidationException) as exc:  # the latter: pyiceberg's own check
                    retries[op[1]] += 1
                    messages.append(f"{op}: {exc}")
                    if op[1] == "append" and table.scan(row_filter=EqualTo("part", op[2])).plan_files():
                        appends_retried_on_a_filled_partition.append(op[0])
                    table = table.refresh()

    run_writers(writers, write)

    hot = ice.load_table("eq.hot")
    chain = assert_valid_chain(hot)
    order = committed_order(hot, chain)
    ops = {op[0]: (op, w) for w, plan in plans.items() for op in plan}
    # an append is rebased unless its partition was empty at its base (then it may be an overwrite whose delete
    # matched nothing, and a concurrent append there gives it a 409 for the client's retry to decide)
    assert appends_retried_on_a_filled_partition == [], "\n".join(messages[:5])
    # every op that changed something is in the chain once; only no-op deletes may be missing
    missing = set(ops) - set(order)
    assert all(ops[op_id][0][1] == "delete" for op_id in missing), missing
    assert len(order) == len(set(order))

    ice.create_table("eq.serial", schema=SCHEMA, partition_spec=SPEC, properties=NO_CLIENT_RETRY)
    serial = ice.load_table("eq.serial")
    for op_id in order:
        op, writer = ops[op_id]
        apply_op(serial, op, writer)
    serial = ice.load_table("eq.serial")

    assert rows_of(hot) == rows_of(serial)
    assert live_files(hot) == live_files(serial)
    assert committed_order(serial, assert_valid_chain(serial)) == order
    hot_head, serial_head = hot.current_snapshot(), serial.current_snapshot()
    assert hot_head is not None
    assert hot_head.summary is not None
    assert serial_head is not None
    assert serial_head.summary is not None
    for total in ("total-records", "total-data-files", "total-delete-files"):
        assert hot_head.summary[total] == serial_head.summary[total]


# --- what the server reads is named by the client -------------------------------------------------


@pytest.mark.parametrize("manifest_list", ["missing", "outside", "not-avro"])
def test_stale_commit_keeps_its_409_when_a_manifest_list_cannot_be_read(rest: RestApi, manifest_list: str) -> None:
    create_namespace(rest, "hot")
    created = create_table(rest, "hot", "events", {"properties": {"catalog-es.server-side-rebase": "true"}})
    assert created.status_code == 200, created.text
    url = table_url(rest, "hot", "events")
    stale = load_table(rest, "hot", "events")["metadata"]
    first = rest.http.post(url, json={"requirements": [], "updates": append_snapshot_updates(stale, 1)})
    assert first.status_code == 200, first.text
    updates = append_snapshot_updates(stale, 2)
    location = stale["location"]
    updates[0]["snapshot"]["manifest-list"] = {
        "missing": f"{location}/metadata/snap-2-missing.avro",
        "outside": "file:///etc/hosts",
        "not-avro": first.json()["metadata-location"],
    }[manifest_list]
    requirement = {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}

    response = rest.http.post(url, json={"requirements": [requirement], "updates": updates})

    assert "branch main was created concurrently" in assert_error(response, 409, "CommitFailedException")
    assert main_snapshot_id(load_table(rest, "hot", "events")["metadata"]) == 1


def test_stale_append_to_a_format_v1_table_is_rebased_without_sequence_numbers(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    ice = client(catalog, warehouse)
    ice.create_namespace("hot")
    ice.create_table("hot.v1", schema=SCHEMA, partition_spec=SPEC, properties={**REBASE, "format-version": "1"})
    stale = client(catalog, warehouse).load_table("hot.v1")
    ice.load_table("hot.v1").append(batch([1], part=0, writer=0))
    ice.load_table("hot.v1").append(batch([2], part=1, writer=0))

    stale.append(batch([3], part=2, writer=1))

    table = ice.load_table("hot.v1")
    assert table.metadata.format_version == 1
    assert rows_of(table) == [(1, 0, 0), (2, 1, 0), (3, 2, 1)]
    head = table.current_snapshot()
    assert head is not None
    assert head.summary is not None
    assert head.summary["total-records"] == "3"
    assert head.parent_snapshot_id == table.metadata.snapshots[1].snapshot_id


# --- per warehouse: POST /management/v1/warehouse/{id}/server-side-rebase -----------------------------


def id_of_warehouse(catalog: RunningCatalog, name: str) -> str:
    listed = httpx.get(f"{catalog.base_url}/management/v1/warehouse", timeout=30).json()["warehouses"]
    return str(next(item["id"] for item in listed if item["name"] == name))


def mode_events(catalog: RunningCatalog) -> list[tuple[str, object]]:
    """(warehouse id, mode) of every warehouse.server-side-rebase-updated event on the server, in log order."""
    found: list[tuple[str, object]] = []
    params: dict[str, str | int] = {"type": "warehouse.server-side-rebase-updated", "pageSize": 1000}
    while True:
        page = httpx.get(f"{catalog.base_url}/management/v1/events", params=params, timeout=30).json()
        for event in page["events"]:
            data = json.loads(event["data"]) if isinstance(event["data"], str) else event["data"]
            found.append((data["warehouse_id"], data["mode"]))
        if not page.get("next-page-token"):
            return found
        params["pageToken"] = page["next-page-token"]


def set_warehouse_mode(catalog: RunningCatalog, warehouse_id: str, body: object) -> httpx.Response:
    url = f"{catalog.base_url}/management/v1/warehouse/{warehouse_id}/server-side-rebase"
    return httpx.post(url, json=body, timeout=30)


def warehouse_mode(catalog: RunningCatalog, warehouse_id: str) -> object:
    got = httpx.get(f"{catalog.base_url}/management/v1/warehouse/{warehouse_id}", timeout=30).json()
    listed = httpx.get(f"{catalog.base_url}/management/v1/warehouse", timeout=30).json()["warehouses"]
    assert [item["server-side-rebase"] for item in listed if item["id"] == warehouse_id] == [got["server-side-rebase"]]
    return got["server-side-rebase"]


def stale_append_lands(ice: Catalog, name: str, writer: int) -> bool:
    """Append through a table loaded before another append landed: True when the server rebased it, False on
    the 409 (the client does not retry); either way the rows are what that outcome must leave."""
    stale = ice.load_table(name)
    before = rows_of(ice.load_table(name))
    ice.load_table(name).append(batch([writer * 10], part=0, writer=0))
    refused: CommitFailedException | None = None
    try:
        stale.append(batch([writer * 10 + 1], part=1, writer=writer))  # another partition than the one filled
    except CommitFailedException as exc:
        refused = exc
    if refused is not None:
        assert "Requirement failed: branch main" in str(refused)
        assert rows_of(ice.load_table(name)) == sorted([*before, (writer * 10, 0, 0)])
        return False
    table = ice.load_table(name)
    assert rows_of(table) == sorted([*before, (writer * 10, 0, 0), (writer * 10 + 1, 1, writer)])
    assert_valid_chain(table)
    return True


def test_warehouse_mode_overrides_the_server_setting_and_null_falls_back_to_it(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    """The server runs at its default (`on`); the table property still decides under `opt-in` and opts a table
    out under `on`."""
    own_id = id_of_warehouse(catalog, warehouse)
    before = mode_events(catalog)  # the module's other tests share the server, and its log
    ice = client(catalog, warehouse)
    ice.create_namespace("wh")
    ice.create_table("wh.plain", schema=SCHEMA, partition_spec=SPEC, properties=NO_CLIENT_RETRY)
    ice.create_table("wh.opted", schema=SCHEMA, partition_spec=SPEC, properties=REBASE)
    opted_out = {"catalog-es.server-side-rebase": "false", **NO_CLIENT_RETRY}
    ice.create_table("wh.opted_out", schema=SCHEMA, partition_spec=SPEC, properties=opted_out)
    assert warehouse_mode(catalog, own_id) is None
    assert stale_append_lands(ice, "wh.plain", 1) is True  # the server's `on`: no property needed

    assert set_warehouse_mode(catalog, own_id, {"mode": "off"}).status_code == 204
    assert warehouse_mode(catalog, own_id) == "off"
    assert stale_append_lands(ice, "wh.opted", 2) is False  # the property alone no longer opts in
    assert stale_append_lands(ice, "wh.plain", 3) is False

    assert set_warehouse_mode(catalog, own_id, {"mode": "opt-in"}).status_code == 204
    assert stale_append_lands(ice, "wh.opted", 4) is True
    assert stale_append_lands(ice, "wh.plain", 5) is False

    assert set_warehouse_mode(catalog, own_id, {"mode": "on"}).status_code == 204
    assert warehouse_mode(catalog, own_id) == "on"
    assert stale_append_lands(ice, "wh.plain", 6) is True
    assert stale_append_lands(ice, "wh.opted_out", 7) is False

    assert set_warehouse_mode(catalog, own_id, {"mode": None}).status_code == 204  # back to the server's
    assert warehouse_mode(catalog, own_id) is None
    assert stale_append_lands(ice, "wh.plain", 8) is True
    assert stale_append_lands(ice, "wh.opted_out", 9) is False
    assert set_warehouse_mode(catalog, own_id, {}).status_code == 204  # absent: the same as null
    assert warehouse_mode(catalog, own_id) is None

    # every such event since the test began (for any warehouse) is one of its own five, in order
    assert mode_events(catalog) == [*before, *((own_id, mode) for mode in ("off", "opt-in", "on", None, None))]


def test_warehouse_mode_route_refuses_a_bad_mode_and_a_missing_warehouse(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    own_id = id_of_warehouse(catalog, warehouse)
    before = mode_events(catalog)
    for body in ({"mode": "always"}, {"mode": True}, {"mode": "on", "colour": "red"}, ["on"]):
        assert_error(set_warehouse_mode(catalog, own_id, body), 400, "BadRequestException")
    assert warehouse_mode(catalog, own_id) is None  # nothing recorded
    missing = set_warehouse_mode(catalog, "00000000-0000-0000-0000-00000000beef", {"mode": "on"})
    assert "does not exist" in assert_error(missing, 404, "NoSuchWarehouseException")
    assert mode_events(catalog) == before  # nothing recorded for any warehouse
