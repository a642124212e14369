"""A commit lets go of the metadata files its log no longer keeps only when the table asks for it (Iceberg's rule)."""

from __future__ import annotations

import uuid

from catalog_es.metadata.retention import removed_metadata_files
from catalog_es.metadata.tables import commit, new_metadata

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _history(properties: dict[str, str], commits: int):
    metadata = new_metadata(
        schema=SCHEMA,
        partition_spec=None,
        write_order=None,
        location="file:///w/t",
        properties=properties,
        table_uuid=uuid.UUID(int=1),
        last_updated_ms=1,
    )
    removed: list[list[str]] = []
    for step in range(commits):
        updated = commit(
            metadata,
            f"file:///w/t/m{step}.json",
            [],
            [{"action": "set-properties", "updates": {"s": str(step)}}],
            now_ms=10 + step,
        )
        removed.append(removed_metadata_files(metadata, updated))
        metadata = updated
    return metadata, removed


def test_nothing_is_removed_when_the_table_keeps_iceberg_defaults():
    metadata, removed = _history({"write.metadata.previous-versions-max": "1"}, 4)
    assert len(metadata.metadata_log) == 1
    assert removed == [[], [], [], []]


def test_files_dropped_from_the_log_are_removed_when_delete_after_commit_is_enabled():
    properties = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "2"}
    metadata, removed = _history(properties, 5)
    assert [entry.metadata_file for entry in metadata.metadata_log] == ["file:///w/t/m3.json", "file:///w/t/m4.json"]
    assert removed == [[], [], ["file:///w/t/m0.json"], ["file:///w/t/m1.json"], ["file:///w/t/m2.json"]]
