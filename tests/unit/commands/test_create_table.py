"""Creating tables without PostgreSQL: the metadata file is written to a real `file` warehouse."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakes import FakeCatalogState, fake_context, file_warehouse, namespace_row, tabular_row

from catalog_es.errors import AlreadyExistsError, BadRequestError, InvalidLocationError, NoSuchNamespaceError
from catalog_es.events import TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.create_table import CreateTable, handle_create_table

META = EventMetadata(actor="tester")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


@pytest.fixture
def given(tmp_path):
    warehouse = file_warehouse(tmp_path)
    db = namespace_row("db", number=10, warehouse=warehouse)
    taken = [tabular_row("table", db, "t", 20), tabular_row("view", db, "v", 30)]
    ctx, store = fake_context(FakeCatalogState([db], taken, warehouses=[warehouse]))
    return ctx, store, warehouse


def _local(location: str) -> Path:
    return Path(location.removeprefix("file://"))


def test_create_table_writes_its_first_metadata_and_records_it(given):
    ctx, store, warehouse = given
    command = CreateTable(warehouse.id, DB, "events", SCHEMA, META, properties={"owner": "ann"})
    result = asyncio.run(handle_create_table(command, ctx))
    [created] = store.appended
    assert isinstance(created, TableCreated)
    assert (created.name, created.metadata_location, created.metadata) == (
        "events",
        result.metadata_location,
        result.metadata,
    )
    assert created.metadata["table-uuid"] == str(created.table_id)
    assert created.metadata["location"] == f"{warehouse.location}/db/{created.table_id}"
    assert created.metadata["properties"]["owner"] == "ann"
    assert _local(created.metadata_location).is_file()


def test_staging_a_create_records_nothing(given):
    ctx, store, warehouse = given
    result = asyncio.run(
        handle_create_table(CreateTable(warehouse.id, DB, "staged", SCHEMA, META, stage_create=True), ctx)
    )
    assert result.metadata_location is None
    assert store.appended == []


@pytest.mark.parametrize(
    ("name", "namespace", "location", "error", "message"),
    [
        ("T", DB, None, AlreadyExistsError, "Table already exists"),
        ("V", DB, None, AlreadyExistsError, "View with same name already exists"),
        ("x", Namespace(("nope",)), None, NoSuchNamespaceError, "does not exist"),
        ("bad\x1fname", DB, None, BadRequestError, "Invalid table name"),
        ("x", DB, "file:///somewhere/else", InvalidLocationError, "warehouse"),
        ("x", DB, "{wh}/db/t/inner", InvalidLocationError, "overlaps the location of another table"),
    ],
)
def test_create_table_refuses_and_records_and_writes_nothing(given, name, namespace, location, error, message):
    ctx, store, warehouse = given
    before = sorted(_local(warehouse.location).rglob("*"))
    command = CreateTable(
        warehouse.id, namespace, name, SCHEMA, META, location=location and location.format(wh=warehouse.location)
    )
    with pytest.raises(error, match=message):
        asyncio.run(handle_create_table(command, ctx))
    assert store.appended == []
    assert sorted(_local(warehouse.location).rglob("*")) == before


def test_create_table_refuses_a_location_that_is_not_empty(given):
    ctx, store, warehouse = given
    (_local(warehouse.location) / "full").mkdir()
    (_local(warehouse.location) / "full" / "data.parquet").write_bytes(b"x")
    with pytest.raises(InvalidLocationError, match="not empty"):
        asyncio.run(
            handle_create_table(
                CreateTable(warehouse.id, DB, "x", SCHEMA, META, location=f"{warehouse.location}/full"), ctx
            )
        )
    assert store.appended == []


def test_create_table_refuses_an_invalid_schema(given):
    ctx, store, warehouse = given
    with pytest.raises(BadRequestError):
        asyncio.run(
            handle_create_table(CreateTable(warehouse.id, DB, "x", {"type": "struct", "fields": "no"}, META), ctx)
        )
    assert store.appended == []
