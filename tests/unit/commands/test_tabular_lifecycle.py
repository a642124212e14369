"""Register, purge and soft drop without PostgreSQL (renames and hard drops: test_handlers_in_memory.py).

Registered files are real metadata files, written by the create commands to a `file` warehouse.
"""

from __future__ import annotations

import asyncio

import msgspec
import pytest
from fakes import SCHEMA, VERSION, FakeCatalogState, created_row, fake_context, file_warehouse, namespace_row

from catalog_es.errors import AlreadyExistsError, BadRequestError, InvalidLocationError, NoSuchNamespaceError
from catalog_es.events import TableCreated, TableDropped, TableRegistered, ViewCreated, ViewRegistered
from catalog_es.events.lifecycle import TableSoftDropped
from catalog_es.events.tasks import TaskScheduled
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.create_table import CreateTable, handle_create_table
from commands.create_view import CreateView, handle_create_view
from commands.tabular_lifecycle import (
    DropTable,
    RegisterTable,
    RegisterView,
    handle_drop_table,
    handle_register_table,
    handle_register_view,
)

META = EventMetadata(actor="tester")
DB = Namespace(("db",))


@pytest.fixture
def given(tmp_path):
    """A table `t` and a view `v` created (files written) but, in the read model, gone: their files are loose."""
    warehouse = file_warehouse(tmp_path)
    db = namespace_row("db", number=10, warehouse=warehouse)
    catalog = FakeCatalogState([db], warehouses=[warehouse])
    ctx, store = fake_context(catalog)
    table = asyncio.run(handle_create_table(CreateTable(warehouse.id, DB, "t", SCHEMA, META), ctx))
    view = asyncio.run(handle_create_view(CreateView(warehouse.id, DB, "v", SCHEMA, VERSION, META), ctx))
    created = list(store.appended)
    ctx, store = fake_context(catalog)  # a fresh log: the streams of `t` and `v` never were
    return ctx, store, catalog, db, warehouse, table.stored_location, view.stored_location, created


def test_register_table_adopts_the_file_under_its_own_table_uuid(given):
    ctx, store, _, _, warehouse, table_file, _, created = given
    result = asyncio.run(
        handle_register_table(RegisterTable(warehouse.id, DB, "adopted", table_file, False, META), ctx)
    )
    [registered] = store.appended
    assert isinstance(registered, TableRegistered)
    assert (registered.table_id, registered.name, registered.metadata_location) == (
        created[0].entity_id,
        "adopted",
        table_file,
    )
    assert registered.metadata == result.metadata
    assert str(registered.table_id) == result.metadata["table-uuid"]


def test_register_view_adopts_the_file_under_its_own_view_uuid(given):
    ctx, store, _, _, warehouse, _, view_file, created = given
    asyncio.run(handle_register_view(RegisterView(warehouse.id, DB, "adopted_view", view_file, META), ctx))
    [registered] = store.appended
    assert isinstance(registered, ViewRegistered)
    assert (registered.view_id, registered.name, registered.metadata_location) == (
        created[1].entity_id,
        "adopted_view",
        view_file,
    )


def test_register_refuses_taken_names_unless_overwriting_a_table(given):
    ctx, store, catalog, db, warehouse, table_file, view_file, created = given
    table_created, view_created = created
    assert isinstance(table_created, TableCreated)
    assert isinstance(view_created, ViewCreated)
    catalog.tabulars += [created_row(table_created, db), created_row(view_created, db)]
    with pytest.raises(AlreadyExistsError):
        asyncio.run(handle_register_table(RegisterTable(warehouse.id, DB, "T", table_file, False, META), ctx))
    with pytest.raises(AlreadyExistsError):
        asyncio.run(handle_register_view(RegisterView(warehouse.id, DB, "v", view_file, META), ctx))
    with pytest.raises(AlreadyExistsError):  # a view holds the name
        asyncio.run(handle_register_table(RegisterTable(warehouse.id, DB, "v", table_file, False, META), ctx))
    assert store.appended == []
    asyncio.run(handle_register_table(RegisterTable(warehouse.id, DB, "t", table_file, True, META), ctx))
    [replaced] = store.appended
    assert isinstance(replaced, TableRegistered)
    assert replaced.table_id == table_created.table_id
    assert store.versions[f"table-{replaced.table_id}"] == 2  # after its creation


def test_register_table_refuses_a_second_name_for_the_same_table(given):
    ctx, store, catalog, db, warehouse, table_file, _, created = given
    assert isinstance(created[0], TableCreated)
    catalog.tabulars.append(created_row(created[0], db))
    with pytest.raises(AlreadyExistsError, match=r"A table with uuid .* already exists"):
        asyncio.run(handle_register_table(RegisterTable(warehouse.id, DB, "again", table_file, False, META), ctx))
    assert store.appended == []


@pytest.mark.parametrize(
    ("namespace", "location", "error", "message"),
    [
        (DB, "file:///elsewhere/00000.metadata.json", InvalidLocationError, "warehouse"),
        (DB, "{wh}/db/nothing/metadata/00000.metadata.json", BadRequestError, "no such file"),
        (DB, "{view}", BadRequestError, "not a valid table metadata file"),  # a view's metadata is no table's
        (Namespace(("nope",)), "{table}", NoSuchNamespaceError, "does not exist"),
    ],
)
def test_register_table_refuses_files_it_must_not_or_cannot_adopt(given, namespace, location, error, message):
    ctx, store, _, _, warehouse, table_file, view_file, _ = given
    location = location.format(wh=warehouse.location, table=table_file, view=view_file)
    with pytest.raises(error, match=message):
        asyncio.run(handle_register_table(RegisterTable(warehouse.id, namespace, "x", location, False, META), ctx))
    assert store.appended == []


def test_dropping_with_purge_schedules_the_purge_in_the_drops_transaction(given):
    ctx, store, catalog, db, warehouse, _, _, created = given
    assert isinstance(created[0], TableCreated)
    catalog.tabulars.append(row := created_row(created[0], db))
    asyncio.run(handle_drop_table(DropTable(warehouse.id, DB, "t", True, META), ctx))
    [dropped, scheduled] = store.appended
    assert dropped == TableDropped(table_id=row.id, warehouse_id=warehouse.id, purge_requested=True)
    assert isinstance(scheduled, TaskScheduled)
    assert (scheduled.queue, scheduled.entity_id) == ("tabular_purge", row.id)


def test_dropping_on_a_soft_delete_warehouse_hides_the_table_and_schedules_its_expiry(given):
    ctx, store, catalog, db, warehouse, _, _, created = given
    assert isinstance(created[0], TableCreated)
    catalog.tabulars.append(row := created_row(created[0], db))
    catalog.warehouses[0] = msgspec.structs.replace(
        warehouse, delete_profile={"type": "soft", "expiration-seconds": 60}
    )
    asyncio.run(handle_drop_table(DropTable(warehouse.id, DB, "t", None, META), ctx))
    scheduled, hidden = sorted(store.appended, key=lambda event: not isinstance(event, TaskScheduled))
    assert isinstance(scheduled, TaskScheduled)
    assert (scheduled.queue, scheduled.entity_id) == ("tabular_expiration", row.id)
    assert isinstance(hidden, TableSoftDropped)
    assert (hidden.table_id, hidden.name, hidden.expires_at_ms) == (row.id, "t", scheduled.due_at_ms)
