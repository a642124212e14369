"""Server-side rebase on format-version 3: the manifest list's row ids (spec "Row Lineage") and the rebased snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from pyiceberg.avro.file import AvroFile
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import (
    MANIFEST_LIST_FILE_SCHEMAS,
    UNASSIGNED_SEQ,
    ManifestContent,
    ManifestFile,
)
from pyiceberg.manifest import (
    read_manifest_list as read_as_v2,
)
from pyiceberg.table.metadata import TableMetadata, TableMetadataV3

from catalog_es.errors import BadRequestError
from catalog_es.events import Json
from catalog_es.metadata.manifest_row_ids import FIRST_ROW_ID_POSITION, first_row_id
from catalog_es.metadata.rebase import AssignedRows, plan_rebase, rebased_manifests, rebased_snapshot, rebased_updates
from catalog_es.metadata.tables import commit, parse_metadata
from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.manifest_lists import ManifestListWriterV3, read_manifest_list, write_manifest_list
from catalog_es.storage.rebase_files import _ManifestLists
from tests.unit.catalog_es.metadata.test_rebase import (
    TABLE_UUID,
    A,
    B,
    C,
    asserts,
    client_append,
    set_main,
    snapshot_json,
    table,
)

NEW = 200
IO = PyArrowFileIO()


def manifest(path: str, added_by: int, sequence_number: int, row_id: int | None, **counts: Any) -> ManifestFile:
    """A v3 manifest-list entry."""
    return ManifestFile.from_args(
        _table_format_version=3,
        manifest_path=path,
        manifest_length=100,
        partition_spec_id=0,
        content=counts.get("content", ManifestContent.DATA),
        sequence_number=sequence_number,
        min_sequence_number=sequence_number,
        added_snapshot_id=added_by,
        added_files_count=1,
        existing_files_count=1 if counts.get("existing_rows") else 0,
        deleted_files_count=0,
        added_rows_count=counts.get("added_rows", 5),
        existing_rows_count=counts.get("existing_rows", 0),
        deleted_rows_count=0,
        first_row_id=row_id,
    )


def write_v3(path: Path, manifests: list[ManifestFile], next_row_id: int) -> ManifestListWriterV3:
    with write_manifest_list(
        format_version=3,
        output_file=IO.new_output(str(path)),
        snapshot_id=NEW,
        parent_snapshot_id=C,
        sequence_number=4,
        first_row_id=next_row_id,
        avro_compression="deflate",
    ) as writer:
        writer.add_manifests(manifests)
    assert isinstance(writer, ManifestListWriterV3)
    return writer


def test_the_row_id_field_is_the_last_of_the_v3_list_schema_and_the_v2_schema_its_prefix() -> None:
    v2, v3 = MANIFEST_LIST_FILE_SCHEMAS[2].fields, MANIFEST_LIST_FILE_SCHEMAS[3].fields
    assert v3[FIRST_ROW_ID_POSITION].field_id == 520
    assert v3[: len(v2)] == v2
    assert len(v3) == len(v2) + 1


# --- the v3 manifest-list writer -----------------------------------------------------------------------


def test_writer_assigns_row_ids_to_data_manifests_without_one_as_the_spec_example_does(tmp_path: Path) -> None:
    """The spec's "Row Lineage" example: next-row-id 1000, an existing manifest keeps 925, three new ones
    get 1000, 1125 and 1225 (each advancing by its added and existing rows), next-row-id becomes 1375."""
    listed = [
        manifest("existing", 150, 2, 925, added_rows=75),
        manifest("added1", NEW, UNASSIGNED_SEQ, None, added_rows=100, existing_rows=25),
        manifest("added2", NEW, UNASSIGNED_SEQ, None, added_rows=0, existing_rows=100),
        manifest("added3", NEW, UNASSIGNED_SEQ, None, added_rows=125, existing_rows=25),
        manifest("deletes", NEW, UNASSIGNED_SEQ, None, content=ManifestContent.DELETES, added_rows=7),
    ]
    path = tmp_path / "snap.avro"

    writer = write_v3(path, listed, next_row_id=1000)

    read = read_manifest_list(IO.new_input(str(path)), format_version=3)
    assert [(m.manifest_path, first_row_id(m)) for m in read] == [
        ("existing", 925),
        ("added1", 1000),
        ("added2", 1125),
        ("added3", 1225),
        ("deletes", None),
    ]
    assert [m.sequence_number for m in read] == [2, 4, 4, 4, 4]
    assert (writer.first_row_id, writer.assigned_rows, writer.next_row_id) == (1000, 375, 1375)
    assert [first_row_id(m) for m in writer.written] == [first_row_id(m) for m in read]
    assert [first_row_id(m) for m in listed] == [925, None, None, None, None]  # the caller's entries left alone
    assert listed[1].sequence_number == UNASSIGNED_SEQ


def test_writer_never_gives_a_delete_manifest_a_row_id_and_data_manifests_keep_theirs(tmp_path: Path) -> None:
    listed = [
        manifest("dv", NEW, UNASSIGNED_SEQ, 42, content=ManifestContent.DELETES),
        manifest("head-data", C, 3, 10, added_rows=5),
        manifest("pre-v3", A, 1, None, added_rows=3, existing_rows=2),  # a manifest from before the upgrade
    ]
    path = tmp_path / "snap.avro"

    writer = write_v3(path, listed, next_row_id=15)

    read = read_manifest_list(IO.new_input(str(path)), format_version=3)
    assert [first_row_id(m) for m in read] == [None, 10, 15]
    assert writer.assigned_rows == 5


def test_writer_writes_the_header_java_writes(tmp_path: Path) -> None:
    path = tmp_path / "snap.avro"
    write_v3(path, [manifest("m", NEW, UNASSIGNED_SEQ, None)], next_row_id=30)

    with AvroFile[ManifestFile](IO.new_input(str(path)), MANIFEST_LIST_FILE_SCHEMAS[3]) as reader:
        meta = reader.header.meta
    assert {key: meta[key] for key in meta if not key.startswith("avro.")} == {
        "snapshot-id": str(NEW),
        "parent-snapshot-id": str(C),
        "sequence-number": "4",
        "first-row-id": "30",
        "format-version": "3",
    }
    written_fields = [(field.field_id, field.name) for field in reader.header.get_schema().fields]
    assert written_fields == [(field.field_id, field.name) for field in MANIFEST_LIST_FILE_SCHEMAS[3].fields]


def test_a_list_read_as_v2_and_as_v3_is_cached_apart(tmp_path: Path) -> None:
    path = tmp_path / "snap.avro"
    write_v3(path, [manifest("m", NEW, UNASSIGNED_SEQ, None)], next_row_id=30)

    class LocalStorage:
        def file_io(self, location: str) -> PyArrowFileIO:
            return IO

    storage, lists = cast(WarehouseStorage, LocalStorage()), _ManifestLists(size=4)
    as_v2 = lists.read(storage, str(path), format_version=2)
    as_v3 = lists.read(storage, str(path), format_version=3)

    assert [first_row_id(m) for m in as_v2] == [None]  # pyiceberg's own reader drops the field
    assert [len(m) for m in as_v2] == [len(m) for m in read_as_v2(IO.new_input(str(path)))]
    assert [first_row_id(m) for m in as_v3] == [30]
    assert lists.read(storage, str(path), format_version=3) is as_v3


def test_a_list_written_before_the_table_was_v3_reads_as_v3_without_row_ids(tmp_path: Path) -> None:
    path = tmp_path / "snap-v2.avro"
    with write_manifest_list(2, IO.new_output(str(path)), A, None, 1, None, "null") as writer:
        writer.add_manifests([manifest("m-a", A, 1, None, added_rows=3)])

    (read,) = read_manifest_list(IO.new_input(str(path)), format_version=3)

    assert (read.manifest_path, read.added_rows_count, first_row_id(read)) == ("m-a", 3, None)
    assert len(read) == FIRST_ROW_ID_POSITION + 1


# --- the rebased list and snapshot -----------------------------------------------------------------------


def v3_table(next_row_id: int = 30) -> TableMetadata:
    """A v3 table whose main went A → B → C, each snapshot assigning ten row ids."""
    snapshots = [snapshot_json(A, None, 1, 10), snapshot_json(B, A, 2, 20), snapshot_json(C, B, 3, 30)]
    for position, snapshot in enumerate(snapshots):
        snapshot.update({"first-row-id": position * 10, "added-rows": 10})
    document: Json = {
        "format-version": 3,
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
        "current-snapshot-id": C,
        "refs": {"main": {"snapshot-id": C, "type": "branch"}},
        "snapshots": snapshots,
        "next-row-id": next_row_id,
    }
    return parse_metadata(document)


def client_v3_append(base: int) -> Json:
    """Spark's append on its stale base A: its list gave its manifest row id 10, as A ended at 10."""
    update = client_append(base)
    update["snapshot"].update({"first-row-id": 10, "added-rows": 5})
    return update


def test_rebased_v3_list_unassigns_the_clients_row_ids_and_keeps_the_heads() -> None:
    plan = plan_rebase(v3_table(), asserts(A), [client_v3_append(A), set_main()])
    assert plan is not None
    base = [manifest("m-a", A, 1, 0)]
    head = [manifest("m-c", C, 3, 20), manifest("m-b", B, 2, 10), manifest("m-a", A, 1, 0)]
    client = [manifest("m-new", NEW, 2, 10), manifest("m-a", A, 1, 0)]

    lists = rebased_manifests(base, head, [client], plan.snapshots, default_spec_id=0)

    assert lists is not None
    assert [(m.manifest_path, first_row_id(m)) for m in lists[0]] == [
        ("m-new", None),
        ("m-c", 20),
        ("m-b", 10),
        ("m-a", 0),
    ]
    assert lists[0][0].sequence_number == UNASSIGNED_SEQ
    assert first_row_id(client[0]) == 10  # the client's own entry is left alone


def test_rebased_v3_list_written_gives_the_clients_rows_the_next_free_ids(tmp_path: Path) -> None:
    plan = plan_rebase(v3_table(), asserts(A), [client_v3_append(A), set_main()])
    assert plan is not None
    head = [manifest("m-c", C, 3, 20), manifest("m-b", B, 2, 10), manifest("m-a", A, 1, 0)]
    client = [manifest("m-new", NEW, 2, 10), manifest("m-a", A, 1, 0)]
    lists = rebased_manifests([manifest("m-a", A, 1, 0)], head, [client], plan.snapshots, default_spec_id=0)
    assert lists is not None

    writer = write_v3(tmp_path / "snap.avro", lists[0], next_row_id=30)

    assert [first_row_id(m) for m in writer.written] == [30, 20, 10, 0]
    assert writer.assigned_rows == 5


def test_rebased_v3_snapshot_takes_the_tables_next_row_id_and_the_commit_moves_it_past_its_rows() -> None:
    current = v3_table(next_row_id=30)
    plan = plan_rebase(current, asserts(A), [client_v3_append(A), set_main()])
    assert plan is not None

    rebased = rebased_snapshot(
        plan.snapshots[0], plan.head, 4, "file:///w/t/metadata/snap-200-1.avro", 5, AssignedRows(30, 5)
    )
    updated = commit(
        current, "file:///w/t/metadata/00003.json", plan.requirements, rebased_updates(plan, [rebased]), now_ms=5
    )

    assert (rebased.first_row_id, rebased.added_rows) == (30, 5)
    assert plan.snapshots[0].first_row_id == 10  # the client's, which overlaps B's ids
    assert isinstance(updated, TableMetadataV3)
    assert updated.next_row_id == 35
    added = updated.snapshot_by_id(NEW)
    assert added is not None
    assert (added.parent_snapshot_id, added.first_row_id, added.added_rows) == (C, 30, 5)


def test_a_snapshot_keeping_the_clients_stale_first_row_id_is_refused_by_the_commit() -> None:
    current = v3_table(next_row_id=30)
    plan = plan_rebase(current, asserts(A), [client_v3_append(A), set_main()])
    assert plan is not None

    stale = rebased_snapshot(plan.snapshots[0], plan.head, 4, "file:///w/t/metadata/snap-200-1.avro", 5)

    with pytest.raises(BadRequestError, match="first row id smaller than the table's next-row-id"):
        commit(current, "file:///w/t/metadata/00003.json", plan.requirements, rebased_updates(plan, [stale]), now_ms=5)


def test_rebased_v2_snapshot_keeps_no_row_ids() -> None:
    plan = plan_rebase(table(format_version=2), asserts(A), [client_append(A), set_main()])
    assert plan is not None

    rebased = rebased_snapshot(plan.snapshots[0], plan.head, 4, "file:///w/t/metadata/snap-200-1.avro", 5)

    assert (rebased.first_row_id, rebased.added_rows) == (None, None)
