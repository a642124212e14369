"""Failed requirements worded as Iceberg's reference server (`UpdateRequirement`) words them, through `commit`."""

from __future__ import annotations

import uuid

import pytest

from catalog_es.errors import CommitFailedError
from catalog_es.metadata.tables import commit, new_metadata

NOW_MS = 1_700_000_000_000

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}
TABLE_UUID = uuid.UUID("9c12d441-03fe-4693-9a96-a0705ddf69c1")
BASE = new_metadata(
    schema=SCHEMA,
    partition_spec=None,
    write_order=None,
    location="file:///wh/ns/t",
    properties={},
    table_uuid=TABLE_UUID,
    last_updated_ms=1_700_000_000_000,
)
SNAPSHOT = {
    "snapshot-id": 101,
    "sequence-number": 1,
    "timestamp-ms": 1_700_000_000_001,
    "manifest-list": "file:///wh/ns/t/metadata/snap-101.avro",
    "summary": {"operation": "append"},
    "schema-id": 0,
}
WITH_MAIN = commit(
    BASE,
    None,
    [],
    [
        {"action": "add-snapshot", "snapshot": SNAPSHOT},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 101},
    ],
    now_ms=NOW_MS,
)
SET_PROPERTY = [{"action": "set-properties", "updates": {"k": "v"}}]


@pytest.mark.parametrize(
    ("requirement", "message"),
    [
        ({"type": "assert-create"}, "Requirement failed: table already exists"),
        (
            {"type": "assert-table-uuid", "uuid": str(uuid.UUID(int=0))},
            f"Requirement failed: UUID does not match: expected {TABLE_UUID} != {uuid.UUID(int=0)}",
        ),
        (
            {"type": "assert-current-schema-id", "current-schema-id": 3},
            "Requirement failed: current schema changed: expected id 3 != 0",
        ),
        (
            {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 9},
            "Requirement failed: last assigned field id changed: expected id 9 != 1",
        ),
        (
            {"type": "assert-default-sort-order-id", "default-sort-order-id": 4},
            "Requirement failed: default sort order changed: expected id 4 != 0",
        ),
        (
            {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 7},
            "Requirement failed: branch main has changed: expected id 7 != 101",
        ),
    ],
)
def test_failed_requirement_is_worded_as_the_reference_server_words_it(requirement, message):
    with pytest.raises(CommitFailedError) as failed:
        commit(WITH_MAIN, None, [requirement], SET_PROPERTY, now_ms=NOW_MS)

    assert str(failed.value) == message
