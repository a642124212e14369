"""Pure table-metadata decisions: new metadata, commits, snapshot filtering."""

from __future__ import annotations

import uuid

import pytest

from catalog_es.errors import BadRequestError, CommitFailedError
from catalog_es.metadata.tables import (
    commit,
    metadata_to_json,
    new_metadata,
    next_metadata_location,
    only_referenced_snapshots,
    parse_metadata,
)

NOW_MS = 1_700_000_000_000
LOCATION = "file:///wh/ns/t"
BASE_LOCATION = f"{LOCATION}/metadata/00000-{uuid.UUID(int=1)}.metadata.json"
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "ts", "type": "timestamp", "required": False},
    ],
}
TABLE_UUID = uuid.UUID("9c12d441-03fe-4693-9a96-a0705ddf69c1")


def _metadata(partition_spec=None, properties=None):
    return new_metadata(
        schema=SCHEMA,
        partition_spec=partition_spec,
        write_order=None,
        location=LOCATION,
        properties=properties or {},
        table_uuid=TABLE_UUID,
        last_updated_ms=1_700_000_000_000,
    )


def test_new_metadata_assigns_partition_field_ids_from_1000_when_client_omitted_them():
    spec = {
        "fields": [
            {"source-id": 1, "transform": "bucket[4]", "name": "id_bucket"},
            {"source-id": 2, "transform": "day", "name": "ts_day"},
        ]
    }
    document = metadata_to_json(_metadata(partition_spec=spec))
    [stored] = document["partition-specs"]
    assert [field["field-id"] for field in stored["fields"]] == [1000, 1001]
    assert [field["name"] for field in stored["fields"]] == ["id_bucket", "ts_day"]
    assert stored["spec-id"] == 0
    assert document["last-partition-id"] == 1001


def test_new_metadata_is_unpartitioned_when_no_spec_is_given():
    document = metadata_to_json(_metadata())
    assert document["partition-specs"] == [{"spec-id": 0, "fields": []}]


def test_new_metadata_stamps_uuid_location_properties_and_time_when_created():
    document = metadata_to_json(_metadata(properties={"owner": "alice"}))
    assert document["table-uuid"] == str(TABLE_UUID)
    assert document["location"] == LOCATION
    assert document["properties"]["owner"] == "alice"
    assert document["last-updated-ms"] == 1_700_000_000_000
    assert document["current-schema-id"] == 0


def test_new_metadata_raises_bad_request_when_schema_is_invalid():
    with pytest.raises(BadRequestError):
        new_metadata(
            schema={"type": "struct", "fields": [{"id": 1, "name": "x", "type": "no-such-type", "required": True}]},
            partition_spec=None,
            write_order=None,
            location=LOCATION,
            properties={},
            table_uuid=TABLE_UUID,
            last_updated_ms=0,
        )


def test_new_metadata_raises_bad_request_when_partition_source_is_unknown():
    with pytest.raises(BadRequestError):
        _metadata(partition_spec={"fields": [{"source-id": 99, "transform": "identity", "name": "nope"}]})


def test_metadata_json_round_trips_when_parsed_back():
    metadata = _metadata(partition_spec={"fields": [{"source-id": 2, "transform": "day", "name": "ts_day"}]})
    assert parse_metadata(metadata_to_json(metadata)) == metadata


def test_commit_raises_commit_failed_when_table_uuid_requirement_fails():
    with pytest.raises(CommitFailedError):
        commit(
            _metadata(), BASE_LOCATION, [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}], [], now_ms=NOW_MS
        )


def test_commit_raises_commit_failed_when_schema_id_requirement_fails():
    with pytest.raises(CommitFailedError):
        commit(
            _metadata(),
            BASE_LOCATION,
            [{"type": "assert-current-schema-id", "current-schema-id": 7}],
            [],
            now_ms=NOW_MS,
        )


def test_commit_raises_commit_failed_when_assert_create_meets_an_existing_table():
    with pytest.raises(CommitFailedError):
        commit(_metadata(), BASE_LOCATION, [{"type": "assert-create"}], [], now_ms=NOW_MS)


def test_commit_raises_bad_request_when_update_action_is_unknown():
    with pytest.raises(BadRequestError):
        commit(_metadata(), BASE_LOCATION, [], [{"action": "frobnicate"}], now_ms=NOW_MS)


def test_commit_raises_bad_request_when_requirement_type_is_unknown():
    with pytest.raises(BadRequestError):
        commit(_metadata(), BASE_LOCATION, [{"type": "assert-nothing"}], [], now_ms=NOW_MS)


def test_commit_applies_updates_when_requirements_hold():
    base = _metadata(properties={"a": "1", "b": "2"})
    updated = commit(
        base,
        BASE_LOCATION,
        [{"type": "assert-table-uuid", "uuid": str(TABLE_UUID)}],
        [
            {"action": "set-properties", "updates": {"c": "3"}},
            {"action": "remove-properties", "removals": ["a"]},
        ],
        now_ms=NOW_MS,
    )
    assert updated.properties == {"write.parquet.compression-codec": "zstd", "b": "2", "c": "3"}
    assert [entry.metadata_file for entry in updated.metadata_log] == [BASE_LOCATION]


def test_commit_makes_added_schema_current_when_set_current_schema_is_minus_one():
    new_schema = {
        "type": "struct",
        "schema-id": 1,
        "fields": [*SCHEMA["fields"], {"id": 3, "name": "note", "type": "string", "required": False}],
    }
    updated = commit(
        _metadata(),
        BASE_LOCATION,
        [{"type": "assert-current-schema-id", "current-schema-id": 0}],
        [
            {"action": "add-schema", "schema": new_schema, "last-column-id": 3},
            {"action": "set-current-schema", "schema-id": -1},
        ],
        now_ms=NOW_MS,
    )
    assert [schema.schema_id for schema in updated.schemas] == [0, 1]
    assert updated.current_schema_id == 1
    assert updated.schema().find_field("note").field_id == 3
    assert updated.last_column_id == 3


def test_next_metadata_location_starts_at_zero_when_no_previous_file():
    location = next_metadata_location(_metadata(), None)
    assert location.startswith(f"{LOCATION}/metadata/00000-")
    assert location.endswith(".metadata.json")


def test_next_metadata_location_counts_up_when_previous_file_is_numbered():
    location = next_metadata_location(_metadata(), BASE_LOCATION)
    assert location.startswith(f"{LOCATION}/metadata/00001-")


def _snapshot(snapshot_id: int) -> dict:
    return {"snapshot-id": snapshot_id, "timestamp-ms": snapshot_id, "manifest-list": f"m{snapshot_id}.avro"}


def test_only_referenced_snapshots_keeps_ref_targets_and_current_when_others_exist():
    document = {
        "current-snapshot-id": 3,
        "refs": {"main": {"snapshot-id": 3, "type": "branch"}, "v1": {"snapshot-id": 1, "type": "tag"}},
        "snapshots": [_snapshot(1), _snapshot(2), _snapshot(3), _snapshot(4)],
        "other": "kept",
    }
    filtered = only_referenced_snapshots(document)
    assert [s["snapshot-id"] for s in filtered["snapshots"]] == [1, 3]
    assert filtered["other"] == "kept"
    assert len(document["snapshots"]) == 4  # the input is not modified


def test_only_referenced_snapshots_keeps_current_when_no_ref_names_it():
    document = {"current-snapshot-id": 2, "snapshots": [_snapshot(1), _snapshot(2)]}
    assert [s["snapshot-id"] for s in only_referenced_snapshots(document)["snapshots"]] == [2]


def test_only_referenced_snapshots_is_empty_when_nothing_is_referenced():
    document = {"current-snapshot-id": None, "refs": {}, "snapshots": [_snapshot(1)]}
    assert only_referenced_snapshots(document)["snapshots"] == []


def test_only_referenced_snapshots_gives_empty_list_when_document_has_no_snapshots():
    assert only_referenced_snapshots({"refs": {}})["snapshots"] == []


def test_commit_stamps_the_injected_time_when_no_update_sets_it():
    updated = commit(
        _metadata(), BASE_LOCATION, [], [{"action": "set-properties", "updates": {"k": "v"}}], now_ms=1_234_567
    )
    assert updated.last_updated_ms == 1_234_567


def test_new_metadata_keeps_column_defaults_when_fresh_ids_are_assigned():
    """Spec v3 `initial-default` / `write-default` survive the fresh ids, nested fields too (Java `AssignFreshIds`)."""
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 10, "name": "id", "type": "long", "required": True},
            {"id": 11, "name": "n", "type": "int", "required": False, "initial-default": 7, "write-default": 8},
            {
                "id": 12,
                "name": "point",
                "required": False,
                "type": {
                    "type": "struct",
                    "fields": [
                        {"id": 13, "name": "label", "type": "string", "required": False, "write-default": "none"}
                    ],
                },
            },
            {
                "id": 14,
                "name": "tags",
                "required": False,
                "type": {
                    "type": "list",
                    "element-id": 15,
                    "element-required": False,
                    "element": {
                        "type": "struct",
                        "fields": [{"id": 16, "name": "k", "type": "long", "required": False, "initial-default": 1}],
                    },
                },
            },
        ],
    }
    metadata = new_metadata(
        schema=schema,
        partition_spec=None,
        write_order=None,
        location=LOCATION,
        properties={"format-version": "3"},
        table_uuid=TABLE_UUID,
        last_updated_ms=NOW_MS,
    )

    fields = metadata_to_json(metadata)["schemas"][0]["fields"]
    assert [field["id"] for field in fields] == [1, 2, 3, 4]  # fresh ids all the same
    assert (fields[1]["initial-default"], fields[1]["write-default"]) == (7, 8)
    assert "initial-default" not in fields[0]
    label = fields[2]["type"]["fields"][0]
    assert (label["id"], label["write-default"]) == (5, "none")
    element = fields[3]["type"]["element"]["fields"][0]
    assert element["initial-default"] == 1
    reparsed = metadata_to_json(parse_metadata(metadata_to_json(metadata)))["schemas"][0]["fields"]
    assert reparsed == fields
