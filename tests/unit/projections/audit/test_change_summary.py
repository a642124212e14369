"""The change summariser and the audit filters: pure, no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import msgspec
import pytest

from api.management.audit_params import event_filter, parse_time
from catalog_es.errors import BadRequestError
from projections.audit.change_summary import ChangeSummary, summarize_updates

SCHEMA_V2 = {"type": "struct", "schema-id": 1, "fields": []}


def test_summary_lists_snapshots_schemas_properties_when_commit_does_everything():
    updates = [
        {"action": "add-schema", "schema": SCHEMA_V2, "last-column-id": 3},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-snapshot", "snapshot": {"snapshot-id": 42, "timestamp-ms": 1}},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 42},
        {"action": "set-properties", "updates": {"owner": "bob"}},
        {"action": "remove-properties", "removals": ["tmp"]},
        {"action": "remove-snapshots", "snapshot-ids": [7]},
        {"action": "set-location", "location": "file:///w/t"},
        {"action": "add-spec", "spec": {"fields": []}},
        {"action": "add-spec", "spec": {"fields": []}},
    ]
    summary = summarize_updates(updates)
    assert summary == ChangeSummary(
        snapshots_added=[42],
        snapshots_removed=[7],
        schemas_added=[1],
        current_schema_id=1,
        properties_set={"owner": "bob"},
        properties_removed=["tmp"],
        location="file:///w/t",
        refs_set={"main": 42},
        other=["add-spec"],
    )
    assert summary.describe() == (
        "+snapshot 42; -snapshot 7; +schema 1; current schema 1; ref main=42; set owner=bob; unset tmp;"
        " location file:///w/t; add-spec"
    )


def test_summary_resolves_last_added_schema_from_metadata_when_schema_has_no_id():
    updates = [
        {"action": "add-schema", "schema": {"type": "struct", "fields": []}},
        {"action": "set-current-schema", "schema-id": -1},
    ]
    metadata = {"current-schema-id": 3, "schemas": [{"schema-id": 0}, {"schema-id": 3}]}
    assert summarize_updates(updates, metadata) == ChangeSummary(schemas_added=[3], current_schema_id=3)


def test_summary_json_leaves_out_empty_fields_when_commit_only_sets_properties():
    summary = summarize_updates([{"action": "set-properties", "updates": {"a": "1"}}])
    assert msgspec.json.decode(msgspec.json.encode(summary)) == {"properties-set": {"a": "1"}}


def test_parse_time_reads_utc_when_offset_is_missing():
    assert parse_time("2026-01-31T12:00:00") == datetime(2026, 1, 31, 12, tzinfo=UTC)
    assert parse_time("2026-01-31T12:00:00Z") == datetime(2026, 1, 31, 12, tzinfo=UTC)
    assert parse_time("2026-01-31T14:00:00+02:00") == datetime(2026, 1, 31, 14, tzinfo=timezone(timedelta(hours=2)))


@pytest.mark.parametrize(
    "arguments",
    [
        {"since": "yesterday"},
        {"types": ["table.exploded"]},
        {"entity": "table-not-a-uuid"},
        {"entity": "bogus-0b6c0e2a-aaaa-4bbb-8ccc-9ddddeeeefff"},
    ],
)
def test_event_filter_raises_bad_request_when_value_is_malformed(arguments):
    with pytest.raises(BadRequestError):
        event_filter(**arguments)


def test_event_filter_reads_ids_and_names_when_both_kinds_are_given():
    table_id = "0b6c0e2a-aaaa-4bbb-8ccc-9ddddeeeefff"
    where = event_filter(namespace=[table_id], table=table_id, view="v", types=["table.committed"])
    assert where.namespace_id is not None
    assert where.namespace is None
    assert where.stream_ids == [f"table-{table_id}", f"maintenance-{table_id}"]  # its maintenance jobs too
    assert (where.table_name, where.view_name) == (None, "v")
    assert where.types == ["io.catalog-es.table.committed.v2"]  # the stored v1 events match it too (its SQL)
    assert event_filter(namespace=["sales", "eu"]).namespace == ["sales", "eu"]


def test_summary_records_a_server_side_rebase_and_describes_it():
    updates = [{"action": "add-snapshot", "snapshot": {"snapshot-id": 9, "timestamp-ms": 1}}]
    rebased = {"ref": "main", "original_base_snapshot_id": 5, "new_parent_snapshot_id": 8}
    summary = summarize_updates(updates, None, rebased)
    assert msgspec.json.decode(msgspec.json.encode(summary))["rebased"] == {
        "ref": "main",
        "original-base-snapshot-id": 5,
        "new-parent-snapshot-id": 8,
    }
    assert summary.describe() == "+snapshot 9; rebased by the server onto 8 (client base 5)"
    assert "rebased" not in msgspec.json.decode(msgspec.json.encode(summarize_updates(updates)))


def _schema(schema_id: int, *fields: tuple[int, str]) -> dict[str, object]:
    return {
        "type": "struct",
        "schema-id": schema_id,
        "fields": [{"id": i, "name": name, "type": "long", "required": False} for i, name in fields],
    }


def test_summary_names_columns_renamed_added_and_dropped_when_a_schema_evolves():
    base = _schema(0, (1, "id"), (2, "amount"), (3, "tmp"))
    evolved = _schema(1, (1, "id"), (2, "total"), (4, "region"))
    updates = [{"action": "add-schema", "schema": evolved}, {"action": "set-current-schema", "schema-id": -1}]
    metadata = {"current-schema-id": 1, "schemas": [base, evolved]}
    requirements = [{"type": "assert-current-schema-id", "current-schema-id": 0}]

    summary = summarize_updates(updates, metadata, None, requirements)

    assert (summary.columns_added, summary.columns_dropped, summary.columns_renamed) == (
        ["region"],
        ["tmp"],
        {"amount": "total"},
    )
    assert summary.describe() == (
        "+schema 1; current schema 1; +column region; -column tmp; column amount renamed total"
    )
    assert msgspec.json.decode(msgspec.json.encode(summary))["columns-renamed"] == {"amount": "total"}


def test_summary_compares_with_the_newest_older_schema_when_no_requirement_names_the_base():
    nested = {
        "type": "struct",
        "schema-id": 2,
        "fields": [
            {"id": 1, "name": "id", "type": "long", "required": False},
            {
                "id": 5,
                "name": "point",
                "required": False,
                "type": {"type": "struct", "fields": [{"id": 6, "name": "lat", "type": "double", "required": False}]},
            },
        ],
    }
    older = {**nested, "schema-id": 1}
    older["fields"] = [
        nested["fields"][0],
        {
            **nested["fields"][1],
            "type": {"type": "struct", "fields": [{"id": 6, "name": "y", "type": "double", "required": False}]},
        },
    ]
    metadata = {"current-schema-id": 2, "schemas": [_schema(0, (1, "id")), older, nested]}

    summary = summarize_updates([{"action": "add-schema", "schema": nested}], metadata)

    assert summary.columns_renamed == {"point.y": "point.lat"}
    assert summary.columns_added == summary.columns_dropped == []


def test_summary_names_the_schema_the_catalog_assigned_when_a_commit_records_its_change():
    updates = [
        {"action": "add-schema", "schema": {"type": "struct", "fields": []}},
        {"action": "set-current-schema", "schema-id": -1},
    ]
    summary = summarize_updates(updates, None, None, None, {"schema": 4})
    assert summary.schemas_added == [4]
    assert summary.current_schema_id == 4
