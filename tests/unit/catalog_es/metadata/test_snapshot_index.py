"""Parsed table metadata finds snapshots by id in a dict shared along a table's appends, with pyiceberg's answers."""

from __future__ import annotations

from typing import Any

import pytest
from pyiceberg.table.metadata import TableMetadataUtil

from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.encryption_keys import KeyedTableMetadataV3
from catalog_es.metadata.snapshot_index import indexed
from catalog_es.metadata.tables import commit, metadata_to_json, parse_metadata

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _document(format_version: int, snapshots: int) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format-version": format_version,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        "location": "s3://b/t",
        "last-updated-ms": 1,
        "last-column-id": 1,
        "schemas": [SCHEMA],
        "current-schema-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "default-spec-id": 0,
        "last-partition-id": 999,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "properties": {},
        "snapshots": [_snapshot(step, format_version) for step in range(1, snapshots + 1)],
    }
    if format_version >= 2:
        document["last-sequence-number"] = snapshots
    if format_version == 3:
        document["next-row-id"] = snapshots
    if format_version == 1:
        document["schema"], document["partition-spec"] = SCHEMA, []
    if snapshots:
        document["current-snapshot-id"] = 100 + snapshots
        document["refs"] = {"main": {"snapshot-id": 100 + snapshots, "type": "branch"}}
    return document


def _snapshot(step: int, format_version: int) -> dict[str, Any]:
    snapshot: dict[str, Any] = {
        "snapshot-id": 100 + step,
        "timestamp-ms": 1000 + step,
        "manifest-list": f"s3://b/t/metadata/snap-{step}.avro",
        "summary": {"operation": "append"},
        "schema-id": 0,
    }
    if step > 1:
        snapshot["parent-snapshot-id"] = 99 + step
    if format_version >= 2:
        snapshot["sequence-number"] = step
    if format_version == 3:
        snapshot["first-row-id"], snapshot["added-rows"] = step - 1, 1
    return snapshot


def _append(step: int, format_version: int) -> list[dict[str, Any]]:
    return [
        {"action": "add-snapshot", "snapshot": _snapshot(step, format_version)},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 100 + step},
    ]


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_an_indexed_model_dumps_and_answers_as_pyiceberg_does_when_parsed(format_version):
    document = _document(format_version, 5)
    parsed = parse_metadata(document)
    plain = (
        KeyedTableMetadataV3.model_validate(document) if format_version == 3 else TableMetadataUtil.parse_obj(document)
    )
    assert type(parsed) is not type(plain)
    assert isinstance(parsed, type(plain))
    assert parsed == plain
    assert plain == parsed
    assert metadata_to_json(parsed) == metadata_to_json(plain)
    for snapshot_id in [*range(99, 108), -1]:
        assert parsed.snapshot_by_id(snapshot_id) == plain.snapshot_by_id(snapshot_id)
    assert parsed.current_snapshot() is parsed.snapshots[-1]
    assert indexed(parsed) is parsed
    assert metadata_to_json(indexed(plain)) == metadata_to_json(plain)


@pytest.mark.parametrize("format_version", [2, 3])
def test_appends_share_the_index_and_each_model_sees_only_its_own_snapshots(format_version):
    base = parse_metadata(_document(format_version, 3))
    assert base.snapshot_by_id(104) is None
    one = commit(base, "s3://b/t/m3.json", [], _append(4, format_version), now_ms=5000)
    two = commit(one, "s3://b/t/m4.json", [], _append(5, format_version), now_ms=6000)
    assert two.snapshot_by_id(105) is two.snapshots[-1]
    assert one.snapshot_by_id(105) is None  # the shared index knows 105; `one` does not hold it
    assert base.snapshot_by_id(104) is None
    assert one.snapshot_by_id(104) is one.snapshots[-1]
    # A second commit on the same base (a lost race retried elsewhere) gets its own snapshots, not the first's.
    other = commit(one, "s3://b/t/m4.json", [], _append(6, format_version), now_ms=7000)
    assert other.snapshot_by_id(105) is None
    assert other.snapshot_by_id(106) is other.snapshots[-1]
    assert two.snapshot_by_id(106) is None
    assert two == parse_metadata(metadata_to_json(two))


def test_a_duplicate_snapshot_id_is_refused_as_pyiceberg_refuses_it():
    base = parse_metadata(_document(2, 3))
    with pytest.raises(Exception, match="already exists"):
        commit(base, "s3://b/t/m3.json", [], _append(2, 2)[:1], now_ms=5000)


def test_removed_snapshots_are_not_found_after_the_commit_removing_them():
    base = parse_metadata(_document(2, 4))
    assert base.snapshot_by_id(101) is not None
    updated = commit(base, "s3://b/t/m4.json", [], [{"action": "remove-snapshots", "snapshot-ids": [101]}], now_ms=9)
    assert updated.snapshot_by_id(101) is None
    assert updated.snapshot_by_id(104) is updated.snapshots[-1]
    assert document_after(base, metadata_to_json(base), updated) == metadata_to_json(updated)


def test_documents_keep_an_upgraded_tables_model_indexed():
    """pyiceberg builds a format upgrade's model afresh, of a plain class: the documents index it for what follows."""
    base = parse_metadata(_document(2, 3))
    upgraded = commit(
        base, "s3://b/t/m3.json", [], [{"action": "upgrade-format-version", "format-version": 3}], now_ms=9
    )
    documents = MetadataDocuments()
    documents.remember("s3://b/t/m4.json", metadata_to_json(upgraded), upgraded)
    kept = documents.parsed("s3://b/t/m4.json")
    assert kept is not None
    assert kept is not upgraded
    assert kept == upgraded
    assert indexed(kept) is kept
    assert metadata_to_json(kept) == metadata_to_json(upgraded)
    assert kept.snapshot_by_id(103) is kept.snapshots[-1]
