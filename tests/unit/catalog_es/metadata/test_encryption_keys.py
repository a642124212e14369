"""Encryption-key updates (spec 1.11), applied through pyiceberg's update dispatcher."""

from __future__ import annotations

import uuid

import pytest

from catalog_es.errors import BadRequestError
from catalog_es.metadata.tables import commit, metadata_to_json, new_metadata, parse_metadata

NOW_MS = 1_700_000_000_000

LOCATION = "file:///wh/ns/t"
BASE_LOCATION = f"{LOCATION}/metadata/00000-{uuid.UUID(int=1)}.metadata.json"
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


def _metadata(format_version: str = "3", **properties: str):
    return new_metadata(
        schema=SCHEMA,
        partition_spec=None,
        write_order=None,
        location=LOCATION,
        properties={"format-version": format_version, **properties},
        table_uuid=uuid.UUID(int=7),
        last_updated_ms=1_700_000_000_000,
    )


def _add(key_id: str) -> dict[str, object]:
    return {
        "action": "add-encryption-key",
        "encryption-key": {"key-id": key_id, "encrypted-key-metadata": "c2VjcmV0", "encrypted-by-id": "kms-1"},
    }


def test_keys_are_added_and_removed_and_survive_a_round_trip_when_table_is_v3():
    base = _metadata()
    with_two = commit(base, BASE_LOCATION, [], [_add("k1"), _add("k2")], now_ms=NOW_MS)
    second_location = BASE_LOCATION.replace("00000-", "00001-")
    after_remove = commit(
        with_two, second_location, [], [{"action": "remove-encryption-key", "key-id": "k1"}], now_ms=NOW_MS
    )

    document = metadata_to_json(after_remove)
    assert [key["key-id"] for key in document["encryption-keys"]] == ["k2"]
    assert document["encryption-keys"][0]["encrypted-by-id"] == "kms-1"
    assert [entry["metadata-file"] for entry in document["metadata-log"]] == [BASE_LOCATION, second_location]
    reparsed = metadata_to_json(parse_metadata(document))
    assert reparsed["encryption-keys"] == document["encryption-keys"]


def test_commit_is_refused_when_key_exists_already_or_is_missing():
    with_key = commit(_metadata(), BASE_LOCATION, [], [_add("k1")], now_ms=NOW_MS)
    with pytest.raises(BadRequestError, match="already exists"):
        commit(with_key, BASE_LOCATION, [], [_add("k1")], now_ms=NOW_MS)
    with pytest.raises(BadRequestError, match="does not exist"):
        commit(with_key, BASE_LOCATION, [], [{"action": "remove-encryption-key", "key-id": "nope"}], now_ms=NOW_MS)


def test_commit_is_refused_when_table_is_below_format_version_3():
    with pytest.raises(BadRequestError, match="format version 3"):
        commit(_metadata(format_version="2"), BASE_LOCATION, [], [_add("k1")], now_ms=NOW_MS)


@pytest.mark.parametrize(
    "update",
    [
        {"action": "set-properties", "updates": {"encryption.key-id": "other"}},
        {"action": "remove-properties", "removals": ["encryption.key-id"]},
    ],
)
def test_encryption_key_id_property_cannot_change_when_set(update):
    base = _metadata(**{"encryption.key-id": "key-a"})
    with pytest.raises(BadRequestError, match=r"encryption\.key-id"):
        commit(base, BASE_LOCATION, [], [update], now_ms=NOW_MS)
