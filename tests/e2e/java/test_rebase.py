"""Server-side rebase (issue 19) as Iceberg 1.10's Java client sees it: stale appends land, conflicts still fail.

Java's snapshot producers refresh the table before they write, so a stale commit only happens when another
commit lands between that refresh and the client's POST. The tests open that window on purpose: the change is
staged in a transaction on an old base and sent by the table's own `RESTTableOperations.commit(base, metadata)`,
the call and request a losing writer makes. Client retries are off, so every success is the server's rebase.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.java.jvm import Java, java_error

pytestmark = [pytest.mark.e2e, pytest.mark.java]

FIELDS = [
    {"id": 1, "name": "id", "type": "int", "required": True},
    {"id": 2, "name": "part", "type": "int", "required": True},
]
REBASE = {"commit.retry.num-retries": "0", "catalog-es.server-side-rebase": "true"}
# The owner's word that overwrites act on whole partitions (here: explicit files of one partition each).
SCOPED = {**REBASE, "catalog-es.server-side-rebase.partition-scoped-overwrites": "true"}


def create(java: Java, catalog: Any, ident: Any, properties: dict[str, str]) -> Any:
    """A table partitioned by `part` (identity)."""
    schema = java.schema(FIELDS)
    spec = java.iceberg.PartitionSpec.builderFor(schema).identity("part").build()
    builder = catalog.buildTable(ident, schema).withPartitionSpec(spec)
    for key, value in properties.items():
        builder = builder.withProperty(key, value)
    return builder.create()


def data_file(java: Java, table: Any, name: str, part: int, records: int) -> Any:
    """A data file entry (never read: commits and scan planning touch manifests only)."""
    builder = java.iceberg.DataFiles.builder(table.spec()).withPartitionPath(f"part={part}").withFormat("PARQUET")
    builder = builder.withPath(f"{table.location()}/data/part={part}/{name}.parquet")
    return builder.withFileSizeInBytes(100 * records).withRecordCount(records).build()


def send_stale(stale: Any, transaction: Any) -> None:
    """Commit what `transaction` staged on the base it started from, as a writer that lost a race does."""
    stale.operations().commit(transaction.startMetadata(), transaction.currentMetadata())


def planned_files(table: Any) -> list[str]:
    tasks = table.newScan().planFiles()
    names = []
    iterator = tasks.iterator()
    while iterator.hasNext():
        names.append(str(iterator.next().file().location()).rsplit("/", 1)[1])
    tasks.close()
    return sorted(names)


def chain(table: Any) -> list[Any]:
    """The snapshots from the head back to the first, following parent ids."""
    snapshots = []
    snapshot = table.currentSnapshot()
    while snapshot is not None:
        snapshots.append(snapshot)
        parent = snapshot.parentId()
        snapshot = table.snapshot(parent) if parent is not None else None
    return snapshots


def test_stale_fast_and_merge_appends_land_on_the_head_and_the_java_client_takes_the_rebased_snapshot(
    java: Java, catalog: Any, namespace: Any
) -> None:
    ident = java.ident(namespace, "t")
    # merge-append folds the manifests it keeps into its own once there are two: none may be listed twice
    table = create(java, catalog, ident, {**REBASE, "commit.manifest.min-count-to-merge": "2"})
    table.newFastAppend().appendFile(data_file(java, table, "a", 0, 1)).commit()
    stale_fast, stale_merge = catalog.loadTable(ident), catalog.loadTable(ident)
    fast, merge = stale_fast.newTransaction(), stale_merge.newTransaction()
    fast.newFastAppend().appendFile(data_file(java, table, "c", 0, 3)).commit()
    merge.newAppend().appendFile(data_file(java, table, "d", 0, 4)).commit()  # partition 0 had data at the base
    table.newFastAppend().appendFile(data_file(java, table, "b", 1, 2)).commit()

    send_stale(stale_fast, fast)
    send_stale(stale_merge, merge)

    head = catalog.loadTable(ident)
    assert planned_files(head) == ["a.parquet", "b.parquet", "c.parquet", "d.parquet"]
    summary = head.currentSnapshot().summary()
    assert (str(summary.get("total-data-files")), str(summary.get("total-records"))) == ("4", "10")
    snapshots = chain(head)
    assert [int(snapshot.sequenceNumber()) for snapshot in snapshots] == [4, 3, 2, 1]
    assert [str(snapshot.operation()) for snapshot in snapshots] == ["append"] * 4
    assert int(snapshots[0].snapshotId()) == int(merge.currentMetadata().currentSnapshot().snapshotId())
    # the committing client took the server's answer: its snapshot, on a head it never saw
    answered = stale_merge.operations().current().currentSnapshot()
    assert int(answered.snapshotId()) == int(snapshots[0].snapshotId())
    assert int(answered.parentId()) == int(snapshots[1].snapshotId())
    stale_merge.refresh()
    assert planned_files(stale_merge) == planned_files(head)


@pytest.mark.parametrize("scoped", [True, False], ids=["partition-scoped", "default"])
def test_stale_overwrite_lands_when_its_partition_was_untouched_and_fails_with_commit_failed_otherwise(
    java: Java, catalog: Any, namespace: Any, scoped: bool
) -> None:
    """By default an overwrite lands on a moved head only if nothing since its base added data (its filter, which
    the server never sees, might reach the new rows); on a partition-scoped table, if its partitions are untouched.
    """
    ident = java.ident(namespace, "t")
    table = create(java, catalog, ident, SCOPED if scoped else REBASE)
    a, x = data_file(java, table, "a", 0, 1), data_file(java, table, "x", 1, 1)
    table.newFastAppend().appendFile(a).appendFile(x).commit()
    stale_disjoint, stale_same = catalog.loadTable(ident), catalog.loadTable(ident)
    disjoint, same = stale_disjoint.newTransaction(), stale_same.newTransaction()
    disjoint.newOverwrite().deleteFile(a).addFile(data_file(java, table, "c", 0, 3)).commit()
    same.newOverwrite().deleteFile(x).addFile(data_file(java, table, "y", 1, 5)).commit()
    table.newFastAppend().appendFile(data_file(java, table, "b", 1, 2)).commit()

    if not scoped:
        refused = java_error(lambda: send_stale(stale_disjoint, disjoint))
        assert refused.type_name == "CommitFailedException"
        assert [str(snapshot.operation()) for snapshot in chain(catalog.loadTable(ident))] == ["append", "append"]
        return
    send_stale(stale_disjoint, disjoint)
    conflict = java_error(lambda: send_stale(stale_same, same))

    assert conflict.type_name == "CommitFailedException"
    assert "Requirement failed: branch main" in conflict.message
    head = catalog.loadTable(ident)
    assert planned_files(head) == ["b.parquet", "c.parquet", "x.parquet"]
    summary = head.currentSnapshot().summary()
    assert (str(summary.get("total-data-files")), str(summary.get("total-records"))) == ("3", "6")
    assert [str(snapshot.operation()) for snapshot in chain(head)] == ["overwrite", "append", "append"]
