"""Pure view-metadata decisions: new views, requirements, updates, version ids, the version log."""

from __future__ import annotations

import uuid

import pytest

from catalog_es.errors import BadRequestError, CommitFailedError
from catalog_es.metadata.views import (
    commit_view,
    new_view_metadata,
    next_view_metadata_location,
    parse_view_metadata,
    view_metadata_to_json,
)

VIEW_UUID = uuid.UUID("2f3c1d6e-8a4b-4c2d-9e1f-0a1b2c3d4e5f")
LOCATION = "file:///wh/ns/v"
CREATED_MS = 1_700_000_000_000
NOW_MS = 1_800_000_000_000
SCHEMA = {"type": "struct", "schema-id": 7, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
SCHEMA_V2 = {
    "type": "struct",
    "schema-id": 0,
    "fields": [*SCHEMA["fields"], {"id": 2, "name": "name", "type": "string", "required": False}],
}


def version(sql: str, *, schema_id: int = -1, timestamp_ms: int = CREATED_MS, dialect: str = "spark") -> dict:
    return {
        "version-id": 1,
        "schema-id": schema_id,
        "timestamp-ms": timestamp_ms,
        "summary": {"engine-name": "test"},
        "representations": [{"type": "sql", "sql": sql, "dialect": dialect}],
        "default-namespace": ["ns"],
    }


def created(properties: dict[str, str] | None = None):
    return new_view_metadata(
        view_uuid=VIEW_UUID,
        location=LOCATION,
        schema=SCHEMA,
        view_version=version("SELECT 1"),
        properties=properties or {"comment": "first"},
        now_ms=NOW_MS,
    )


def replace(sql: str, schema: dict | None = None, timestamp_ms: int = CREATED_MS + 1) -> list[dict]:
    """What a Java client sends to replace a view's query (ViewReplace)."""
    updates: list[dict] = []
    if schema is not None:
        updates.append({"action": "add-schema", "schema": schema})
    schema_id = -1 if schema is not None else 0
    updates.append(
        {"action": "add-view-version", "view-version": version(sql, schema_id=schema_id, timestamp_ms=timestamp_ms)}
    )
    updates.append({"action": "set-current-view-version", "view-version-id": -1})
    return updates


ASSERT_UUID = [{"type": "assert-view-uuid", "uuid": str(VIEW_UUID)}]


def test_new_view_gets_schema_id_0_version_id_1_and_one_log_entry_when_created():
    document = view_metadata_to_json(created())

    assert document["view-uuid"] == str(VIEW_UUID)
    assert document["format-version"] == 1
    assert document["location"] == LOCATION
    assert [schema["schema-id"] for schema in document["schemas"]] == [0]
    [only] = document["versions"]
    assert (only["version-id"], only["schema-id"], only["timestamp-ms"]) == (1, 0, CREATED_MS)
    assert only["representations"] == [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}]
    assert document["current-version-id"] == 1
    assert document["version-log"] == [{"version-id": 1, "timestamp-ms": CREATED_MS}]
    assert document["properties"] == {"comment": "first"}
    assert parse_view_metadata(document) == created()


@pytest.mark.parametrize(
    ("schema", "view_version", "message"),
    [
        ({"type": "struct", "fields": [{"id": 1, "name": "x", "type": "nope"}]}, version("SELECT 1"), "schema"),
        (SCHEMA, {**version("SELECT 1"), "representations": None}, "view version"),
        (SCHEMA, {**version("SELECT 1"), "default-namespace": None}, "view version"),
        (
            SCHEMA,
            {
                **version("SELECT 1"),
                "representations": [
                    {"type": "sql", "sql": "SELECT 1", "dialect": "spark"},
                    {"type": "sql", "sql": "SELECT 2", "dialect": "Spark"},
                ],
            },
            "multiple queries for dialect spark",
        ),
    ],
    ids=["bad-schema", "no-representations", "no-default-namespace", "duplicate-dialect"],
)
def test_new_view_raises_bad_request_when_definition_is_invalid(schema, view_version, message):
    with pytest.raises(BadRequestError, match=message):
        new_view_metadata(
            view_uuid=VIEW_UUID, location=LOCATION, schema=schema, view_version=view_version, properties={}, now_ms=0
        )


def test_replace_adds_schema_and_version_and_logs_it_at_the_version_timestamp_when_client_replaces_query():
    updated = commit_view(created(), ASSERT_UUID, replace("SELECT id, name", SCHEMA_V2), now_ms=NOW_MS)
    document = view_metadata_to_json(updated)

    assert [schema["schema-id"] for schema in document["schemas"]] == [0, 1]
    assert [(v["version-id"], v["schema-id"]) for v in document["versions"]] == [(1, 0), (2, 1)]
    assert document["current-version-id"] == 2
    assert document["version-log"] == [
        {"version-id": 1, "timestamp-ms": CREATED_MS},
        {"version-id": 2, "timestamp-ms": CREATED_MS + 1},
    ]


def test_replace_reuses_equal_schema_and_version_and_logs_reactivation_at_now_when_query_is_restored():
    second = commit_view(created(), ASSERT_UUID, replace("SELECT 2"), now_ms=NOW_MS)
    # Back to the first query: an equal schema (ids aside) and an equal version (id and time aside) are reused.
    restored = commit_view(second, ASSERT_UUID, replace("SELECT 1", SCHEMA, timestamp_ms=5), now_ms=NOW_MS)

    assert [schema.schema_id for schema in restored.schemas] == [0]
    assert [v.version_id for v in restored.versions] == [1, 2]
    assert restored.current_version_id == 1
    assert [(e.version_id, e.timestamp_ms) for e in restored.version_log] == [
        (1, CREATED_MS),
        (2, CREATED_MS + 1),
        (1, NOW_MS),
    ]


def test_replace_sets_and_removes_properties_and_location_when_asked():
    updated = commit_view(
        created({"a": "1", "b": "2"}),
        [],
        [
            {"action": "set-properties", "updates": {"a": "10", "c": "3"}},
            {"action": "remove-properties", "removals": ["b", "missing"]},
            {"action": "set-location", "location": "file:///wh/elsewhere"},
            {"action": "upgrade-format-version", "format-version": 1},
            {"action": "assign-uuid", "uuid": str(VIEW_UUID).upper()},
        ],
        now_ms=NOW_MS,
    )

    assert updated.properties == {"a": "10", "c": "3"}
    assert updated.location == "file:///wh/elsewhere"
    assert updated.version_log == created().version_log


def test_commit_returns_base_unchanged_when_there_are_no_updates():
    base = created()

    assert commit_view(base, ASSERT_UUID, [], now_ms=NOW_MS) == base


def test_commit_raises_commit_failed_when_view_uuid_does_not_match():
    with pytest.raises(CommitFailedError, match="view UUID does not match"):
        commit_view(created(), [{"type": "assert-view-uuid", "uuid": str(uuid.uuid4())}], [], now_ms=NOW_MS)


@pytest.mark.parametrize(
    ("requirements", "updates", "message"),
    [
        ([{"type": "assert-table-uuid", "uuid": str(VIEW_UUID)}], [], "requirements"),
        ([], [{"action": "add-snapshot", "snapshot": {}}], "updates"),
        ([], [{"action": "set-properties", "updates": {"k": 1}}], "updates"),
        ([], [{"action": "set-current-view-version", "view-version-id": -1}], "no view version has been added"),
        ([], [{"action": "set-current-view-version", "view-version-id": 42}], "unknown version: 42"),
        ([], [{"action": "add-view-version", "view-version": version("SELECT 3")}], "no schema has been added"),
        ([], [{"action": "add-view-version", "view-version": version("SELECT 3", schema_id=5)}], "unknown schema: 5"),
        ([], [{"action": "upgrade-format-version", "format-version": 2}], "Unsupported view format version"),
        ([], [{"action": "assign-uuid", "uuid": str(uuid.uuid4())}], "reassign"),
        ([], [{"action": "set-properties", "updates": {"version.history.num-entries": "0"}}], "positive"),
    ],
    ids=[
        "table-requirement",
        "table-update",
        "non-string-property",
        "no-last-added-version",
        "unknown-version",
        "no-last-added-schema",
        "unknown-schema",
        "format-version-2",
        "reassign-uuid",
        "history-size-0",
    ],
)
def test_commit_raises_bad_request_when_update_is_invalid(requirements, updates, message):
    with pytest.raises(BadRequestError, match=message):
        commit_view(created(), requirements, updates, now_ms=NOW_MS)


def test_replace_raises_bad_request_when_it_drops_a_dialect_unless_allowed():
    both = {
        **version("SELECT 1", schema_id=0),
        "representations": [
            {"type": "sql", "sql": "SELECT 1", "dialect": "spark"},
            {"type": "sql", "sql": "SELECT 1", "dialect": "trino"},
        ],
    }
    two_dialects = commit_view(
        created(),
        [],
        [
            {"action": "add-view-version", "view-version": both},
            {"action": "set-current-view-version", "view-version-id": -1},
        ],
        now_ms=NOW_MS,
    )

    with pytest.raises(BadRequestError, match="loss of view dialects"):
        commit_view(two_dialects, [], replace("SELECT 2"), now_ms=NOW_MS)
    allowed = commit_view(
        two_dialects,
        [],
        [{"action": "set-properties", "updates": {"replace.drop-dialect.allowed": "true"}}, *replace("SELECT 2")],
        now_ms=NOW_MS,
    )
    assert allowed.current_version_id == 3


def test_replace_expires_oldest_versions_and_their_log_when_history_size_is_exceeded():
    metadata = created({"version.history.num-entries": "2"})
    for i in range(2, 5):
        metadata = commit_view(metadata, [], replace(f"SELECT {i}", timestamp_ms=CREATED_MS + i), now_ms=NOW_MS)

    assert [v.version_id for v in metadata.versions] == [3, 4]
    assert metadata.current_version_id == 4
    assert [(e.version_id, e.timestamp_ms) for e in metadata.version_log] == [(3, CREATED_MS + 3), (4, CREATED_MS + 4)]


def test_next_metadata_location_numbers_files_after_the_previous_one():
    file_id = uuid.UUID(int=3)

    spelled_by_spark = created().model_copy(update={"location": "file:/wh/ns/v/"})
    assert next_view_metadata_location(spelled_by_spark, None, file_id) == (
        f"file:/wh/ns/v/metadata/00000-{file_id}.metadata.json"  # as the client spells it (#29 item 12)
    )
    previous = f"{LOCATION}/metadata/00007-{uuid.UUID(int=1)}.metadata.json"
    assert next_view_metadata_location(created(), previous, file_id) == (
        f"{LOCATION}/metadata/00008-{file_id}.metadata.json"
    )


def test_next_metadata_location_is_under_write_metadata_path_when_the_view_sets_it():
    file_id = uuid.UUID(int=3)
    metadata = created({"write.metadata.path": "file:/wh/ns/custom-meta/"})

    assert next_view_metadata_location(metadata, None, file_id) == (
        f"file:/wh/ns/custom-meta/00000-{file_id}.metadata.json"
    )


@pytest.mark.parametrize(
    "document",
    [
        {"format-version": 2, "table-uuid": str(VIEW_UUID), "location": LOCATION},
        {**view_metadata_to_json(created()), "current-version-id": 9},
        {**view_metadata_to_json(created()), "schemas": []},
    ],
    ids=["table-metadata", "missing-current-version", "missing-schema"],
)
def test_parse_raises_bad_request_when_document_is_not_valid_view_metadata(document):
    with pytest.raises(BadRequestError, match="view metadata"):
        parse_view_metadata(document)
