"""The pure rules of server-side rebase: which commits qualify, and what the rebased snapshot and list hold."""

from __future__ import annotations

from typing import Any

import pytest
from pyiceberg.manifest import UNASSIGNED_SEQ, ManifestContent, ManifestFile
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Operation, Summary

from catalog_es.events import Json
from catalog_es.metadata.rebase import (
    PARTITION_SCOPED_PROPERTY,
    RebaseMode,
    conflicting,
    plan_rebase,
    rebase_enabled,
    rebased_manifests,
    rebased_snapshot,
    rebased_updates,
)
from catalog_es.metadata.tables import parse_metadata

TABLE_UUID = "9c12d441-03fe-4693-9a96-a0705ddf69c1"
A, B, C, NEW = 101, 102, 103, 200


def snapshot_json(snapshot_id: int, parent: int | None, sequence_number: int, records: int) -> Json:
    return {
        "snapshot-id": snapshot_id,
        **({"parent-snapshot-id": parent} if parent is not None else {}),
        "sequence-number": sequence_number,
        "timestamp-ms": 1_700_000_000_000 + sequence_number,
        "manifest-list": f"file:///w/t/metadata/snap-{snapshot_id}.avro",
        "summary": {"operation": "append", "total-records": str(records), "total-data-files": str(sequence_number)},
        "schema-id": 0,
    }


def table(format_version: int = 2, main: int | None = C) -> TableMetadata:
    """A table whose main went A → B → C (a sequence number and ten records per snapshot)."""
    snapshots = [snapshot_json(A, None, 1, 10), snapshot_json(B, A, 2, 20), snapshot_json(C, B, 3, 30)]
    document: Json = {
        "format-version": format_version,
        "table-uuid": TABLE_UUID,
        "location": "file:///w/t",
        "last-sequence-number": 3,
        "last-updated-ms": 1_700_000_000_003,
        "last-column-id": 1,
        "current-schema-id": 0,
        "schemas": [
            {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
        ],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": main,
        "refs": {"main": {"snapshot-id": main, "type": "branch"}} if main is not None else {},
        "snapshots": snapshots,
    }
    if format_version == 3:
        document["next-row-id"] = 0
    return parse_metadata(document)


def client_append(base: int | None, operation: str = "append", schema_id: int = 0) -> Json:
    snapshot = {
        "snapshot-id": NEW,
        **({"parent-snapshot-id": base} if base is not None else {}),
        "sequence-number": 2,
        "timestamp-ms": 1_700_000_000_100,
        "manifest-list": "file:///w/t/metadata/snap-200-client.avro",
        "summary": {"operation": operation, "added-records": "5", "added-data-files": "1", "total-records": "15"},
        "schema-id": schema_id,
    }
    return {"action": "add-snapshot", "snapshot": snapshot}


def set_main(snapshot_id: int = NEW) -> Json:
    return {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id}


def asserts(base: int | None, **extra: Any) -> list[Json]:
    return [
        {"type": "assert-table-uuid", "uuid": TABLE_UUID},
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": base},
        *([extra["more"]] if "more" in extra else []),
    ]


def manifest(path: str, added_by: int, sequence_number: int, **counts: Any) -> ManifestFile:
    return ManifestFile.from_args(
        manifest_path=path,
        manifest_length=100,
        partition_spec_id=counts.get("spec", 0),
        content=counts.get("content", ManifestContent.DATA),
        sequence_number=sequence_number,
        min_sequence_number=counts.get("min_sequence_number", sequence_number),
        added_snapshot_id=added_by,
        added_files_count=counts.get("added", 1),
        existing_files_count=counts.get("existing", 0),
        deleted_files_count=counts.get("deleted", 0),
        added_rows_count=5,
        existing_rows_count=0,
        deleted_rows_count=0,
    )


# --- switches ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "prop", "expected"),
    [
        ("opt-in", None, False),
        ("opt-in", "true", True),
        ("opt-in", "TRUE", True),
        ("on", None, True),
        ("on", "false", False),
        ("off", "true", False),
    ],
)
def test_rebase_is_enabled_by_setting_and_table_property_when_combined(
    mode: RebaseMode, prop: str | None, expected: bool
) -> None:
    properties = {} if prop is None else {"catalog-es.server-side-rebase": prop}
    assert rebase_enabled(mode, properties) is expected


# --- which commits qualify ---------------------------------------------------------------------------


def test_stale_append_is_planned_on_the_head_when_main_moved_since_its_base() -> None:
    plan = plan_rebase(table(), asserts(A), [client_append(A), set_main()])

    assert plan is not None
    assert plan.original_base == A
    assert plan.head.snapshot_id == C
    assert [s.snapshot_id for s in plan.concurrent] == [B, C]
    assert plan.append_only
    assert plan.requirements[-1] == {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": C}
    assert plan.requirements[0] == {"type": "assert-table-uuid", "uuid": TABLE_UUID}


def test_append_on_an_empty_branch_is_planned_when_main_was_created_since() -> None:
    plan = plan_rebase(table(), asserts(None), [client_append(None), set_main()])

    assert plan is not None
    assert [s.snapshot_id for s in plan.concurrent] == [A, B, C]


@pytest.mark.parametrize(
    ("requirements", "updates", "why"),
    [
        (asserts(A, more={"type": "assert-current-schema-id", "current-schema-id": 5}), None, "another requirement"),
        ([{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}], None, "wrong table"),
        (asserts(999), [client_append(999), set_main()], "base not an ancestor"),
        (asserts(A), [client_append(A), set_main(), {"action": "set-properties", "updates": {"a": "b"}}], "more"),
        (asserts(A), [client_append(A, operation="replace"), set_main()], "a compaction"),
        (asserts(A), [client_append(A, schema_id=1), set_main()], "another schema"),
        (asserts(A), [client_append(B), set_main()], "parent is not the asserted base"),
        (asserts(A), [client_append(A)], "branch not moved"),
        (asserts(A), [client_append(A), set_main(C)], "branch moved elsewhere"),
    ],
)
def test_commit_keeps_its_conflict_when_it_is_not_a_plain_stale_snapshot_commit(
    requirements: list[Json], updates: list[Json] | None, why: str
) -> None:
    plan = plan_rebase(table(), requirements, updates or [client_append(A), set_main()])
    assert plan is None, why


@pytest.mark.parametrize("format_version", [2, 3])
def test_stale_append_is_planned_on_format_versions_2_and_3_alike(format_version: int) -> None:
    plan = plan_rebase(table(format_version=format_version), asserts(A), [client_append(A), set_main()])

    assert plan is not None
    assert plan.head.snapshot_id == C  # v3's row ids: tests/unit/catalog_es/storage/test_rebase_v3.py


# --- the rebased manifest list and snapshot ------------------------------------------------------------


def test_rebased_list_is_the_clients_new_manifests_on_the_heads_list_with_sequence_numbers_unassigned() -> None:
    base = [manifest("m-a", A, 1)]
    head = [manifest("m-c", C, 3), manifest("m-b", B, 2), manifest("m-a", A, 1)]
    client = [manifest("m-new", NEW, 2), manifest("m-a", A, 1)]
    plan = plan_rebase(table(), asserts(A), [client_append(A), set_main()])
    assert plan is not None

    lists = rebased_manifests(base, head, [client], plan.snapshots, default_spec_id=0)

    assert lists is not None
    assert [m.manifest_path for m in lists[0]] == ["m-new", "m-c", "m-b", "m-a"]
    assert lists[0][0].sequence_number == UNASSIGNED_SEQ
    assert lists[0][0].min_sequence_number == UNASSIGNED_SEQ
    assert [m.sequence_number for m in lists[0][1:]] == [3, 2, 1]
    assert client[0].sequence_number == 2  # the client's own object is left alone


def test_rebased_list_conflicts_when_a_dropped_manifest_was_rewritten_concurrently() -> None:
    base = [manifest("m-a", A, 1)]
    head = [manifest("m-a-rewritten-by-c", C, 3, existing=1)]
    client = [manifest("m-a-rewritten-by-client", NEW, 2, existing=1, deleted=1, min_sequence_number=1)]
    plan = plan_rebase(table(), asserts(A), [client_append(A, operation="overwrite"), set_main()])
    assert plan is not None

    assert rebased_manifests(base, head, [client], plan.snapshots, default_spec_id=0) is None


def test_rebased_list_keeps_older_minimum_sequence_numbers_of_a_rewritten_manifest() -> None:
    base = [manifest("m-a", A, 1), manifest("m-b", B, 2)]
    head = [manifest("m-c", C, 3), *base]
    client = [manifest("m-a-rewritten", NEW, 2, existing=1, deleted=1, min_sequence_number=1), base[1]]
    plan = plan_rebase(table(), asserts(B), [client_append(B, operation="overwrite"), set_main()])
    assert plan is not None

    lists = rebased_manifests(base, head, [client], plan.snapshots, default_spec_id=0)

    assert lists is not None
    assert [m.manifest_path for m in lists[0]] == ["m-a-rewritten", "m-c", "m-b"]
    assert (lists[0][0].sequence_number, lists[0][0].min_sequence_number) == (UNASSIGNED_SEQ, 1)


def test_rebased_list_ignores_dropped_manifests_without_live_files_when_others_dropped_them_first() -> None:
    deleted_only = manifest("m-deletes", B, 2, added=0, deleted=3)
    plan = plan_rebase(table(), asserts(B), [client_append(B), set_main()])
    assert plan is not None

    client = [manifest("m-new", NEW, 2)]
    lists = rebased_manifests([deleted_only], [manifest("m-c", C, 3)], [client], plan.snapshots, default_spec_id=0)

    assert lists is not None
    assert [m.manifest_path for m in lists[0]] == ["m-new", "m-c"]


@pytest.mark.parametrize(
    "own",
    [
        manifest("m-new", NEW, 2, content=ManifestContent.DELETES),
        manifest("m-new", NEW, 2, deleted=1),
        manifest("m-new", NEW, 2, spec=1),
    ],
)
def test_append_conflicts_when_it_deletes_or_writes_another_spec(own: ManifestFile) -> None:
    plan = plan_rebase(table(), asserts(A), [client_append(A), set_main()])
    assert plan is not None

    assert rebased_manifests([], [manifest("m-c", C, 3)], [[own]], plan.snapshots, default_spec_id=0) is None


def test_rebased_snapshot_has_the_heads_totals_plus_the_clients_changes_and_a_new_parent() -> None:
    current = table()
    plan = plan_rebase(current, asserts(A), [client_append(A), set_main()])
    assert plan is not None

    rebased = rebased_snapshot(plan.snapshots[0], plan.head, 4, "file:///w/t/metadata/snap-200-1.avro", 5)

    assert rebased.snapshot_id == NEW
    assert rebased.parent_snapshot_id == C
    assert rebased.sequence_number == 4
    assert rebased.manifest_list == "file:///w/t/metadata/snap-200-1.avro"
    totals = {"total-records": "35", "total-data-files": "4"}
    assert rebased.summary == Summary(Operation.APPEND, **{"added-records": "5", "added-data-files": "1", **totals})
    assert rebased.timestamp_ms >= plan.head.timestamp_ms
    updates = rebased_updates(plan, [rebased])
    assert updates[0]["snapshot"]["parent-snapshot-id"] == C
    assert updates[0]["snapshot"]["summary"]["total-records"] == "35"
    assert updates[1] == set_main()


def test_scoped_partitions_conflict_only_when_the_client_and_a_concurrent_commit_share_one() -> None:
    assert conflicting({(0, ("a",))}, {(0, ("a",)), (0, ("b",))}, scoped=True, concurrent_added_data=True)
    assert not conflicting({(0, ("a",))}, {(0, ("b",))}, scoped=True, concurrent_added_data=True)
    assert not conflicting({(0, ("a",))}, set(), scoped=True, concurrent_added_data=False)


def test_unscoped_overwrite_conflicts_with_any_data_added_since_its_base_even_in_other_partitions() -> None:
    assert conflicting({(0, ("a",))}, {(0, ("b",))}, scoped=False, concurrent_added_data=True)
    assert not conflicting({(0, ("a",))}, {(0, ("b",))}, scoped=False, concurrent_added_data=False)
    assert conflicting({(0, ("a",))}, {(0, ("a",))}, scoped=False, concurrent_added_data=False)


def test_an_overwrite_is_partition_scoped_only_as_a_partition_replacement_or_by_the_tables_word() -> None:
    overwrite = client_append(A, operation="overwrite")
    replacing = client_append(A, operation="overwrite")
    replacing["snapshot"]["summary"]["replace-partitions"] = "true"
    scoped_table = table().model_copy(update={"properties": {PARTITION_SCOPED_PROPERTY: "true"}})

    plain = plan_rebase(table(), asserts(A), [overwrite, set_main()])
    replacement = plan_rebase(table(), asserts(A), [replacing, set_main()])
    on_scoped_table = plan_rebase(scoped_table, asserts(A), [overwrite, set_main()])
    append = plan_rebase(table(), asserts(A), [client_append(A), set_main()])

    assert plain is not None
    assert not plain.scoped_to_partitions
    assert replacement is not None
    assert replacement.scoped_to_partitions
    assert on_scoped_table is not None
    assert on_scoped_table.scoped_to_partitions
    assert append is not None
    assert append.scoped_to_partitions  # nothing to scope: a fast append deletes nothing
