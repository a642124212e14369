"""Table commits without PostgreSQL: given a table created by the create command on a real `file` warehouse."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import msgspec
import pytest
from fakes import FakeCatalogState, created_row, fake_context, file_warehouse, namespace_row

from catalog_es.errors import (
    CommitFailedError,
    InvalidLocationError,
    MetadataFileNotFoundError,
    NoSuchTableError,
    WarehouseInactiveError,
)
from catalog_es.events import TableCommitted, TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.metadata.table_changes import metadata_digest
from catalog_es.store.eventstore import EventMetadata
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table

META = EventMetadata(actor="tester")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
SET_OWNER = [{"action": "set-properties", "updates": {"owner": "bo"}}]


@pytest.fixture
def given(tmp_path):
    """Table `db.t`, created by `handle_create_table` and projected into the read model."""
    warehouse = file_warehouse(tmp_path)
    db = namespace_row("db", number=10, warehouse=warehouse)
    catalog = FakeCatalogState([db], warehouses=[warehouse])
    ctx, store = fake_context(catalog)
    asyncio.run(handle_create_table(CreateTable(warehouse.id, DB, "t", SCHEMA, META), ctx))
    [created] = store.appended
    assert isinstance(created, TableCreated)
    catalog.tabulars.append(created_row(created, db))
    store.appended.clear()
    return ctx, store, catalog.tabulars[0]


def _files(row) -> list[str]:
    return sorted(path.name for path in Path(row.location.removeprefix("file://"), "metadata").iterdir())


def _commit(row, requirements: list, updates: list) -> CommitTable:
    return CommitTable(row.warehouse_id, DB, row.name, requirements, updates, META)


def test_commit_writes_the_next_metadata_file_and_records_the_change(given):
    ctx, store, row = given
    requirements = [{"type": "assert-table-uuid", "uuid": str(row.id)}]
    result = asyncio.run(handle_commit_table(_commit(row, requirements, SET_OWNER), ctx))
    assert result.metadata["properties"]["owner"] == "bo"
    [committed] = store.appended
    assert isinstance(committed, TableCommitted)
    assert (committed.table_id, committed.requirements, committed.updates) == (row.id, requirements, SET_OWNER)
    assert committed.previous_metadata_location == row.metadata_location
    assert committed.metadata_location == result.metadata_location != row.metadata_location
    assert committed.metadata_sha256 == metadata_digest(result.metadata)
    assert len(_files(row)) == 2
    assert store.versions[f"table-{row.id}"] == 2


def test_a_commit_that_changes_nothing_records_and_writes_nothing(given):
    ctx, store, row = given
    result = asyncio.run(handle_commit_table(_commit(row, [], []), ctx))
    assert result.metadata_location == row.metadata_location
    assert store.appended == []
    assert len(_files(row)) == 1


@pytest.mark.parametrize("mode", ["on", "off"])
def test_a_failed_requirement_is_a_conflict_with_nothing_recorded_or_written(given, mode):
    ctx, store, row = given
    ctx = dataclasses.replace(ctx, server_side_rebase=mode)
    wrong = [{"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000bad"}]
    with pytest.raises(CommitFailedError):
        asyncio.run(handle_commit_table(_commit(row, wrong, SET_OWNER), ctx))
    assert store.appended == []
    assert len(_files(row)) == 1


def test_losing_to_a_concurrent_commit_is_a_conflict_and_deletes_the_file_it_wrote(given):
    ctx, store, row = given
    ctx = dataclasses.replace(ctx, server_side_rebase="off")
    store.versions[f"table-{row.id}"] = 2  # another commit landed after the read model was read
    with pytest.raises(CommitFailedError, match="changed concurrently"):
        asyncio.run(handle_commit_table(_commit(row, [], SET_OWNER), ctx))
    assert store.appended == []
    assert _files(row) == [Path(row.metadata_location).name]


def test_commit_refuses_a_missing_table_and_one_whose_metadata_file_is_gone(given):
    ctx, store, row = given
    with pytest.raises(NoSuchTableError):
        asyncio.run(handle_commit_table(CommitTable(row.warehouse_id, DB, "nope", [], SET_OWNER, META), ctx))
    Path(row.metadata_location.removeprefix("file://")).unlink()
    with pytest.raises(MetadataFileNotFoundError):
        asyncio.run(handle_commit_table(_commit(row, [], SET_OWNER), ctx))
    assert store.appended == []


def _staged_create(row, name: str, location: str) -> CommitTable:
    updates = [
        {"action": "assign-uuid", "uuid": "00000000-0000-0000-0000-0000000000aa"},
        {"action": "upgrade-format-version", "format-version": 2},
        {"action": "add-schema", "schema": SCHEMA, "last-column-id": 1},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": location},
    ]
    return CommitTable(row.warehouse_id, DB, name, [{"type": "assert-create"}], updates, META)


def test_a_commit_asserting_create_creates_the_staged_table(given):
    ctx, store, row = given
    location = row.location.rsplit("/", 1)[0] + "/ctas"
    result = asyncio.run(handle_commit_table(_staged_create(row, "ctas", location), ctx))
    [created] = store.appended
    assert isinstance(created, TableCreated)
    assert (str(created.table_id), created.name) == ("00000000-0000-0000-0000-0000000000aa", "ctas")
    assert created.metadata["location"] == location
    assert created.metadata_location == result.metadata_location
    assert Path(created.metadata_location.removeprefix("file://")).is_file()


def test_a_staged_create_is_refused_inside_another_tables_location(given):
    ctx, store, row = given
    with pytest.raises(InvalidLocationError, match="overlaps"):
        asyncio.run(handle_commit_table(_staged_create(row, "ctas", f"{row.location}/inner"), ctx))
    assert store.appended == []


def test_commit_in_a_request_acts_on_the_warehouse_its_edge_resolved_when_the_context_is_bound(given):
    """One resolution per request: the command takes the edge's row, even once the read model moved on meanwhile
    (here: deactivated after the request began); the unbound context still resolves it."""
    ctx, _, row = given
    resolved = next(w for w in ctx.state.warehouses if w.id == row.warehouse_id)
    ctx.state.warehouses[:] = [msgspec.structs.replace(resolved, status="inactive")]
    bound = ctx.for_request(resolved)

    result = asyncio.run(handle_commit_table(_commit(row, [], SET_OWNER), bound))

    assert result.metadata["properties"]["owner"] == "bo"
    assert ctx.resolved is None
    with pytest.raises(WarehouseInactiveError):
        asyncio.run(handle_commit_table(_commit(row, [], SET_OWNER), ctx))
