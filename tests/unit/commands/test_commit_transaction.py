"""Multi-table commits without PostgreSQL: given two tables created by the create command on `file` storage."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakes import FakeCatalogState, created_row, fake_context, file_warehouse, namespace_row

from catalog_es.errors import BadRequestError, CommitFailedError, NoSuchTableError
from catalog_es.events import TableCommitted, TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.commit_transaction import CommitTransaction, TableChange, handle_commit_transaction
from commands.create_table import CreateTable, handle_create_table

META = EventMetadata(actor="tester")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
SET_OWNER = [{"action": "set-properties", "updates": {"owner": "bo"}}]


@pytest.fixture
def given(tmp_path):
    """Tables `db.a` and `db.b`, created by `handle_create_table` and projected into the read model."""
    warehouse = file_warehouse(tmp_path)
    db = namespace_row("db", number=10, warehouse=warehouse)
    catalog = FakeCatalogState([db], warehouses=[warehouse])
    ctx, store = fake_context(catalog)
    for name in ("b", "a"):
        asyncio.run(handle_create_table(CreateTable(warehouse.id, DB, name, SCHEMA, META), ctx))
    for created in store.appended:
        assert isinstance(created, TableCreated)
        catalog.tabulars.append(created_row(created, db))
    store.appended.clear()
    return ctx, store, warehouse, {row.name: row for row in catalog.tabulars}


def _metadata_files(tables) -> int:
    return sum(len(list(Path(row.location.removeprefix("file://"), "metadata").iterdir())) for row in tables.values())


def _transaction(warehouse, *changes: TableChange) -> CommitTransaction:
    return CommitTransaction(warehouse.id, list(changes), META)


def test_a_transaction_records_one_commit_per_table_in_table_id_order(given):
    ctx, store, warehouse, tables = given
    changes = [
        TableChange(DB, name, [{"type": "assert-table-uuid", "uuid": str(tables[name].id)}], SET_OWNER)
        for name in ("a", "b")
    ]
    asyncio.run(handle_commit_transaction(_transaction(warehouse, *changes), ctx))
    assert all(isinstance(event, TableCommitted) for event in store.appended)
    assert [event.table_id for event in store.appended] == sorted(row.id for row in tables.values())  # type: ignore[attr-defined]
    assert _metadata_files(tables) == 4


def test_one_failed_requirement_fails_the_whole_transaction_and_writes_nothing(given):
    ctx, store, warehouse, tables = given
    wrong = [{"type": "assert-table-uuid", "uuid": str(tables["a"].id)}]  # `a`'s uuid asserted on `b`
    changes = [TableChange(DB, "a", [], SET_OWNER), TableChange(DB, "b", wrong, SET_OWNER)]
    with pytest.raises(CommitFailedError):
        asyncio.run(handle_commit_transaction(_transaction(warehouse, *changes), ctx))
    assert store.appended == []
    assert _metadata_files(tables) == 2


def test_a_transaction_losing_a_race_on_one_table_records_nothing_and_deletes_its_files(given):
    ctx, store, warehouse, tables = given
    store.versions[f"table-{tables['b'].id}"] = 2  # `b` changed after the read model was read
    changes = [TableChange(DB, "a", [], SET_OWNER), TableChange(DB, "b", [], SET_OWNER)]
    with pytest.raises(CommitFailedError, match="changed concurrently"):
        asyncio.run(handle_commit_transaction(_transaction(warehouse, *changes), ctx))
    assert store.appended == []
    assert _metadata_files(tables) == 2


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ([], BadRequestError),
        ([TableChange(DB, "a", [], SET_OWNER), TableChange(DB, "A", [], SET_OWNER)], BadRequestError),
        ([TableChange(DB, "a", [], SET_OWNER), TableChange(DB, "nope", [], SET_OWNER)], NoSuchTableError),
    ],
)
def test_a_transaction_refuses_no_changes_a_table_twice_and_a_missing_table(given, changes, error):
    ctx, store, warehouse, tables = given
    with pytest.raises(error):
        asyncio.run(handle_commit_transaction(_transaction(warehouse, *changes), ctx))
    assert store.appended == []
    assert _metadata_files(tables) == 2
