"""Creating views without PostgreSQL: the metadata file is written to a real `file` warehouse."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakes import SCHEMA, VERSION, FakeCatalogState, fake_context, file_warehouse, namespace_row, tabular_row

from catalog_es.errors import AlreadyExistsError, BadRequestError, InvalidLocationError, NoSuchNamespaceError
from catalog_es.events import ViewCreated
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.create_view import CreateView, handle_create_view

META = EventMetadata(actor="tester")
DB = Namespace(("db",))


@pytest.fixture
def given(tmp_path):
    warehouse = file_warehouse(tmp_path)
    db = namespace_row("db", number=10, warehouse=warehouse)
    taken = [tabular_row("table", db, "t", 20), tabular_row("view", db, "v", 30)]
    ctx, store = fake_context(FakeCatalogState([db], taken, warehouses=[warehouse]))
    return ctx, store, warehouse


def test_create_view_writes_its_first_metadata_and_records_it(given):
    ctx, store, warehouse = given
    result = asyncio.run(handle_create_view(CreateView(warehouse.id, DB, "recent", SCHEMA, VERSION, META), ctx))
    [created] = store.appended
    assert isinstance(created, ViewCreated)
    assert (created.name, created.metadata_location, created.metadata) == (
        "recent",
        result.metadata_location,
        result.metadata,
    )
    assert created.metadata["view-uuid"] == str(created.view_id)
    assert created.metadata["versions"][0]["representations"][0]["sql"] == "SELECT 1"
    assert Path(created.metadata_location.removeprefix("file://")).is_file()


@pytest.mark.parametrize(
    ("name", "namespace", "location", "error", "message"),
    [
        ("T", DB, None, AlreadyExistsError, "Table with same name already exists"),
        ("V", DB, None, AlreadyExistsError, "View already exists"),
        ("x", Namespace(("nope",)), None, NoSuchNamespaceError, "does not exist"),
        ("bad\x1fname", DB, None, BadRequestError, "Invalid view name"),
        ("x", DB, "file:///somewhere/else", InvalidLocationError, "warehouse"),
    ],
)
def test_create_view_refuses_and_records_nothing(given, name, namespace, location, error, message):
    ctx, store, warehouse = given
    with pytest.raises(error, match=message):
        asyncio.run(
            handle_create_view(CreateView(warehouse.id, namespace, name, SCHEMA, VERSION, META, location=location), ctx)
        )
    assert store.appended == []
