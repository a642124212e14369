"""Every retired event version still decodes, as its current version, without the stored payload changing."""

from __future__ import annotations

import uuid

from catalog_es.events import EVENT_TYPES, TableCommitted, ViewCommitted, decode_event, stored_types, upcast
from catalog_es.events.registry import full_type, short_type, types_of

TABLE, WAREHOUSE = uuid.UUID(int=3), uuid.UUID(int=2)
DOCUMENT = {"format-version": 2, "table-uuid": str(TABLE), "location": "file:///w/t", "last-updated-ms": 1234}
V1 = {
    "table_id": str(TABLE),
    "warehouse_id": str(WAREHOUSE),
    "requirements": [],
    "updates": [{"action": "set-properties", "updates": {"k": "v"}}],
    "previous_metadata_location": "file:///w/t/metadata/00000-a.metadata.json",
    "metadata_location": "file:///w/t/metadata/00001-b.metadata.json",
    "metadata": DOCUMENT,
}


def test_table_committed_v1_decodes_as_v2_with_its_document_when_read():
    event = decode_event("io.catalog-es.table.committed.v1", dict(V1))
    assert isinstance(event, TableCommitted)
    assert event.metadata == DOCUMENT  # recorded whole: replay takes it as it is
    assert event.applied_at_ms == 1234
    assert event.metadata_sha256 is None
    assert event.updates == V1["updates"]
    assert event.rebased is None


def test_table_committed_v1_keeps_a_rebase_when_it_recorded_one():
    rebased = {"ref": "main", "original_base_snapshot_id": None, "new_parent_snapshot_id": 7}
    event = decode_event("io.catalog-es.table.committed.v1", {**V1, "rebased": rebased})
    assert isinstance(event, TableCommitted)
    assert event.rebased is not None
    assert event.rebased.new_parent_snapshot_id == 7


def test_upcast_leaves_the_stored_payload_unchanged_when_it_reads_it():
    stored = dict(V1)
    type_name, data = upcast("io.catalog-es.table.committed.v1", stored)
    assert type_name == TableCommitted.type_name
    assert stored == V1
    assert "applied_at_ms" in data


def test_table_committed_v2_decodes_without_a_document_when_the_commit_recorded_the_change():
    data = {**V1, "applied_at_ms": 5, "metadata_sha256": "ab" * 32, "assigned_ids": {"schema": 1}}
    del data["metadata"]
    event = decode_event(TableCommitted.type_name, data)
    assert isinstance(event, TableCommitted)
    assert event.metadata is None
    assert event.assigned_ids == {"schema": 1}


def test_both_versions_count_as_table_committed_when_filtering_by_type():
    assert stored_types(TableCommitted.type_name) == [TableCommitted.type_name, "io.catalog-es.table.committed.v1"]
    assert "io.catalog-es.table.committed.v1" in types_of("table", "committed")
    assert full_type("table.committed") == TableCommitted.type_name
    assert short_type("io.catalog-es.table.committed.v1") == "table.committed"
    assert EVENT_TYPES["io.catalog-es.table.committed.v1"] is TableCommitted


def test_view_committed_v1_decodes_as_v2_with_its_document_when_read():
    view = uuid.UUID(int=9)
    document = {"view-uuid": str(view), "format-version": 1, "location": "file:///w/v", "versions": []}
    data = {
        "view_id": str(view),
        "warehouse_id": str(WAREHOUSE),
        "requirements": [],
        "updates": [{"action": "set-properties", "updates": {"k": "v"}}],
        "previous_metadata_location": "file:///w/v/metadata/00000-a.metadata.json",
        "metadata_location": "file:///w/v/metadata/00001-b.metadata.json",
        "metadata": document,
    }
    event = decode_event("io.catalog-es.view.committed.v1", data)
    assert isinstance(event, ViewCommitted)
    assert event.metadata == document
    assert event.metadata_sha256 is None
    assert "io.catalog-es.view.committed.v1" in stored_types(ViewCommitted.type_name)
