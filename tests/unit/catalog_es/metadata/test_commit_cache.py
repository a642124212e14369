"""The cheaper commit's two shortcuts give exactly what the long way gives: random commit sequences, v1 to v3."""

from __future__ import annotations

import random
import uuid
from typing import Any

import msgspec
import pytest

from catalog_es.errors import BadRequestError
from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.tables import commit, metadata_to_json, new_metadata, parse_metadata

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
}


def _table(format_version: str) -> tuple[Any, dict[str, Any]]:
    metadata = new_metadata(
        schema=SCHEMA,
        partition_spec=None,
        write_order=None,
        location="file:///w/t",
        properties={"format-version": format_version},
        table_uuid=uuid.UUID(int=7),
        last_updated_ms=1,
    )
    return metadata, metadata_to_json(metadata)


def _snapshot(metadata: Any, rng: random.Random, step: int) -> list[dict[str, Any]]:
    snapshot_id = 10_000 + step
    snapshot: dict[str, Any] = {
        "snapshot-id": snapshot_id,
        "sequence-number": getattr(metadata, "last_sequence_number", 0) + 1,
        "timestamp-ms": 1_000 + step,
        "manifest-list": f"file:///w/t/metadata/snap-{step}.avro",
        "summary": {"operation": rng.choice(["append", "overwrite"]), "added-records": str(step)},
        "schema-id": metadata.current_schema_id,
    }
    if metadata.current_snapshot_id is not None:
        snapshot["parent-snapshot-id"] = metadata.current_snapshot_id
    if metadata.format_version >= 3:
        snapshot |= {"first-row-id": metadata.next_row_id, "added-rows": 2}
    return [
        {"action": "add-snapshot", "snapshot": snapshot},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
    ]


def _updates(metadata: Any, rng: random.Random, step: int) -> list[dict[str, Any]]:
    choice = rng.randrange(8)
    if choice <= 2:
        return _snapshot(metadata, rng, step)
    if choice == 3:
        return [{"action": "set-properties", "updates": {f"k{rng.randrange(4)}": str(step)}}]
    if choice == 4 and metadata.properties:
        return [{"action": "remove-properties", "removals": [sorted(metadata.properties)[0]]}]
    if choice == 5:
        field = {"id": metadata.last_column_id + 1, "name": f"c{step}", "type": "string", "required": False}
        schema = {
            **SCHEMA,
            "schema-id": len(metadata.schemas),
            "fields": [*metadata.schema().model_dump()["fields"], field],
        }
        return [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}]
    if choice == 6 and len(metadata.snapshots) > 2:
        oldest = metadata.snapshots[0].snapshot_id
        return [{"action": "remove-snapshots", "snapshot-ids": [oldest]}]
    if choice == 7 and metadata.current_snapshot_id is not None:
        return [
            {
                "action": "set-snapshot-ref",
                "ref-name": f"tag{step}",
                "type": "tag",
                "snapshot-id": metadata.current_snapshot_id,
            }
        ]
    return [{"action": "set-location", "location": f"file:///w/t{step % 2}"}]


@pytest.mark.parametrize("format_version", ["1", "2", "3"])
@pytest.mark.parametrize("seed", range(4))
def test_a_document_dumped_from_its_base_equals_the_full_dump_byte_for_byte(format_version: str, seed: int) -> None:
    rng = random.Random(seed)
    base, document = _table(format_version)
    location = "file:///w/t/metadata/00000-a.metadata.json"
    for step in range(40):
        updated = commit(base, location, [], _updates(base, rng, step), now_ms=2_000 + step)
        if format_version != "3" and step == 30:  # a format upgrade changes the model's type: every field is new
            updated = commit(
                updated, location, [], [{"action": "upgrade-format-version", "format-version": 3}], now_ms=9
            )
        expected = metadata_to_json(updated)
        shortcut = document_after(base, document, updated)
        assert msgspec.json.encode(shortcut) == msgspec.json.encode(expected), f"step {step}"
        base, document, location = updated, shortcut, f"file:///w/t/metadata/{step + 1:05d}-a.metadata.json"
    assert len(base.snapshots) > 3  # the sequence did build up history


def test_the_cache_parses_a_location_once_and_keeps_what_a_commit_made() -> None:
    _, document = _table("2")
    cache = MetadataDocuments(capacity=2)
    first = cache.parse("file:///w/t/metadata/0.json", document)
    assert cache.parse("file:///w/t/metadata/0.json", document) is first
    updated = commit(
        first, "file:///w/t/metadata/0.json", [], [{"action": "set-properties", "updates": {"a": "b"}}], now_ms=5
    )
    written = metadata_to_json(updated)
    cache.remember("file:///w/t/metadata/1.json", written, updated)
    assert cache.document("file:///w/t/metadata/1.json") is written  # the commit path reads no document column
    assert cache.parse("file:///w/t/metadata/1.json", written) is updated
    cache.remember("file:///w/t/metadata/2.json", written, updated)
    assert len(cache) == 2  # bounded
    assert cache.document("file:///w/t/metadata/0.json") is None  # evicted: least recently used
    assert cache.parse("file:///w/t/metadata/0.json", document) is not first
    assert cache.parse("file:///w/t/metadata/0.json", document) == first


def test_a_document_that_does_not_match_the_cached_model_is_parsed_afresh() -> None:
    metadata, document = _table("2")
    cache = MetadataDocuments()
    cache.parse("file:///w/t/metadata/0.json", document)
    other = {**document, "last-updated-ms": 99}
    assert cache.parse("file:///w/t/metadata/0.json", other).last_updated_ms == 99
    with pytest.raises(BadRequestError):
        cache.parse("file:///w/t/metadata/1.json", {"format-version": 2})
    assert parse_metadata(document) == metadata
