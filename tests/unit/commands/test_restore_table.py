"""Restoring a table's pointer without PostgreSQL: the metadata files are real files of a `file` warehouse."""

from __future__ import annotations

import asyncio
import uuid

import msgspec
import pytest
from fakes import FakeCatalogState, FakeSoftDeleteState, fake_context, file_warehouse, namespace_row, tabular_row

from catalog_es.errors import BadRequestError, CommitFailedError, NoSuchTableError
from catalog_es.events.lifecycle import TableRestored
from catalog_es.store.eventstore import EventMetadata
from commands.restore_table import RestoreTable, handle_restore_table

META = EventMetadata(actor="tester")


@pytest.fixture
def given(tmp_path):
    """Table `db.t` now at its second metadata file; both files exist and its events recorded both."""
    warehouse = file_warehouse(tmp_path)
    db = namespace_row("db", number=10, warehouse=warehouse)
    table = tabular_row("table", db, "t", 20, version=2)
    first, second = (f"{table.location}/metadata/0000{n}.metadata.json" for n in (1, 2))
    table = msgspec.structs.replace(table, metadata_location=second)
    documents = {
        first: {"format-version": 2, "last-sequence-number": 1},
        second: {"format-version": 2, "last-sequence-number": 2},
    }
    for location, document in documents.items():
        path = tmp_path / location.removeprefix(f"file://{tmp_path}/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(msgspec.json.encode(document))
    catalog = FakeCatalogState([db], [table], warehouses=[warehouse])
    deleted = FakeSoftDeleteState(catalog, recorded={(table.id, loc): doc for loc, doc in documents.items()})
    ctx, store = fake_context(catalog, soft_deletes=deleted)
    return ctx, store, table, first, documents[first]


def test_restore_points_the_table_back_at_its_earlier_file(given):
    ctx, store, table, first, document = given
    answer = asyncio.run(handle_restore_table(RestoreTable(table.warehouse_id, table.id, first, META), ctx))
    assert answer == document
    assert store.appended == [
        TableRestored(
            table_id=table.id,
            warehouse_id=table.warehouse_id,
            previous_metadata_location=table.metadata_location,
            metadata_location=first,
            metadata=document,
        )
    ]


def test_restore_refuses_foreign_current_and_vanished_files_and_missing_tables(given, tmp_path):
    ctx, store, table, first, _ = given
    other = f"file://{tmp_path}/lake/db/other/metadata/00001.metadata.json"

    def restore(table_id: uuid.UUID, location: str) -> None:
        asyncio.run(handle_restore_table(RestoreTable(table.warehouse_id, table_id, location, META), ctx))

    with pytest.raises(BadRequestError, match="is not a metadata file of table"):
        restore(table.id, other)
    with pytest.raises(BadRequestError, match="already"):
        restore(table.id, table.metadata_location)
    with pytest.raises(NoSuchTableError):
        restore(uuid.UUID(int=404), first)
    (tmp_path / first.removeprefix(f"file://{tmp_path}/")).unlink()
    with pytest.raises(BadRequestError, match="cannot be read any more"):
        restore(table.id, first)
    assert store.appended == []


def test_a_commit_landing_between_the_read_and_the_restore_is_a_conflict_not_a_crash(given):
    """Regression: the row is read before the transaction, so a commit in between moved the stream; the restore
    must answer 409 (CommitFailedError), as its comment promised, not let the store's version error through (500)."""
    ctx, store, table, first, _ = given
    store.versions[f"table-{table.id}"] = table.version + 1  # a commit landed after the row was read
    with pytest.raises(CommitFailedError, match="changed concurrently"):
        asyncio.run(handle_restore_table(RestoreTable(table.warehouse_id, table.id, first, META), ctx))
    assert store.appended == []
