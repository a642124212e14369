"""A commit recorded as a change replays to the very document the commit produced, or fails loudly."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.table_changes import (
    MetadataDigestMismatchError,
    check_digest,
    metadata_digest,
    replay_commit,
    replay_view_commit,
)
from catalog_es.metadata.tables import decide_commit, metadata_to_json, parse_metadata
from catalog_es.metadata.views import commit_view, new_view_metadata, parse_view_metadata, view_metadata_to_json
from tests.unit.catalog_es.metadata.test_commit_cache import _table, _updates

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _add(metadata: Any, snapshot_id: int, timestamp_ms: int) -> list[dict[str, Any]]:
    snapshot: dict[str, Any] = {
        "snapshot-id": snapshot_id,
        "sequence-number": metadata.last_sequence_number + 1,
        "timestamp-ms": timestamp_ms,
        "manifest-list": f"file:///w/t/metadata/snap-{snapshot_id}.avro",
        "summary": {"operation": "append"},
        "schema-id": 0,
    }
    if metadata.current_snapshot_id is not None:
        snapshot["parent-snapshot-id"] = metadata.current_snapshot_id
    return [
        {"action": "add-snapshot", "snapshot": snapshot},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
    ]


@pytest.mark.parametrize("format_version", ["1", "2", "3"])
def test_replayed_commits_give_the_committed_documents_when_replayed_from_the_read_models_copy(format_version: str):
    rng = random.Random(int(format_version))
    live, live_document = _table(format_version)
    replayed, replayed_document = live, msgspec_round_trip(live_document)
    location = "file:///w/t/metadata/00000-a.metadata.json"
    for step in range(60):
        updates = _updates(live, rng, step)
        now_ms = 2_000_000 + step
        try:
            updated, _ = decide_commit(live, location, [], updates, now_ms=now_ms)
        except Exception:
            continue
        committed = document_after(live, live_document, updated)
        digest = metadata_digest(committed)
        # The replay starts from the document as the read model returns it (jsonb: another key order).
        replayed, replayed_document = replay_commit(replayed, replayed_document, location, updates, now_ms)
        check_digest(replayed_document, digest, f"step {step}")
        assert replayed_document == committed
        live, live_document = updated, committed
        replayed_document = msgspec_round_trip(replayed_document)
        location = f"file:///w/t/metadata/{step + 1:05d}-a.metadata.json"


def test_a_rollback_is_stamped_with_the_commit_clock_when_main_moves_to_an_older_snapshot():
    base, _ = _table("2")
    first, _ = decide_commit(base, "l0", [], _add(base, 1, 10), now_ms=100)
    second, _ = decide_commit(first, "l1", [], _add(first, 2, 20), now_ms=200)
    rollback = [{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 1}]
    rolled_back, _ = decide_commit(second, "l2", [], rollback, now_ms=12_345)
    assert rolled_back.last_updated_ms == 12_345
    assert rolled_back.snapshot_log[-1].timestamp_ms == 12_345
    again, _ = decide_commit(second, "l2", [], rollback, now_ms=12_345)
    assert metadata_digest(metadata_to_json(again)) == metadata_digest(metadata_to_json(rolled_back))


def test_replay_fails_loudly_when_the_recorded_digest_differs():
    base, document = _table("2")
    _, replayed = replay_commit(base, document, "l0", _add(base, 1, 10), 100)
    with pytest.raises(MetadataDigestMismatchError, match="digest"):
        check_digest(replayed, metadata_digest(document), "table t commit to l1")


def test_assigned_ids_name_the_schema_the_catalog_chose_when_the_client_says_minus_one():
    base, _ = _table("2")
    schema = {
        **SCHEMA,
        "schema-id": 5,
        "fields": [*SCHEMA["fields"], {"id": 2, "name": "x", "type": "int", "required": False}],
    }
    updates = [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}]
    updated, assigned = decide_commit(base, "l0", [], updates, now_ms=5)
    assert assigned == {"schema": 1}
    assert updated.current_schema_id == 1


def test_digest_ignores_key_order_when_documents_are_equal():
    base, document = _table("2")
    assert metadata_digest(document) == metadata_digest(dict(reversed(list(document.items()))))
    assert metadata_digest(document) != metadata_digest({**document, "last-updated-ms": 2})
    assert parse_metadata(document) == base


def msgspec_round_trip(document: dict[str, Any]) -> dict[str, Any]:
    """The document as PostgreSQL's jsonb gives it back: keys reordered (shortest first), values equal."""
    return _reordered(document)


def _reordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reordered(value[key]) for key in sorted(value, key=lambda key: (len(key), key))}
    if isinstance(value, list):
        return [_reordered(element) for element in value]
    return value


def test_a_replayed_view_replace_gives_the_committed_document_when_a_version_is_reactivated():
    view = new_view_metadata(
        view_uuid=uuid.UUID(int=8),
        location="file:///w/v",
        schema=SCHEMA,
        view_version={
            "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}],
            "default-namespace": ["db"],
            "summary": {},
        },
        properties={},
        now_ms=10,
    )
    second = {
        "version-id": 2,
        "schema-id": 0,
        "timestamp-ms": 20,
        "representations": [{"type": "sql", "sql": "select 2", "dialect": "spark"}],
        "default-namespace": ["db"],
        "summary": {},
    }
    steps = [
        [
            {"action": "add-view-version", "view-version": second},
            {"action": "set-current-view-version", "view-version-id": -1},
        ],
        [{"action": "set-current-view-version", "view-version-id": 1}],  # logged with the commit's clock
    ]
    document = view_metadata_to_json(view)
    for now_ms, updates in zip((100, 200), steps, strict=True):
        committed = view_metadata_to_json(commit_view(parse_view_metadata(document), [], updates, now_ms=now_ms))
        replayed = replay_view_commit(_reordered(document), updates, now_ms)
        check_digest(replayed, metadata_digest(committed), f"view at {now_ms}")
        document = committed
    assert document["version-log"][-1]["timestamp-ms"] == 200
