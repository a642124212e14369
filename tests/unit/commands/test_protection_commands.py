"""Setting protection without PostgreSQL (drops refused by it: test_protection_in_memory.py)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import WAREHOUSE, FakeCatalogState, FakeProtectionState, fake_context, namespace_row, tabular_row

from catalog_es.errors import NoSuchNamespaceError, NoSuchTableError, NoSuchViewError, NoSuchWarehouseError
from catalog_es.events.protection import (
    NamespaceProtectionSet,
    TableProtectionSet,
    ViewProtectionSet,
    WarehouseProtectionSet,
)
from catalog_es.protection import Protection
from catalog_es.store.eventstore import EventMetadata
from commands.protection import SetProtection, handle_set_protection

META = EventMetadata(actor="tester")
DB = namespace_row("db", number=10, version=2)
TABLE = tabular_row("table", DB, "t", 20, version=7)
VIEW = tabular_row("view", DB, "v", 30)


def _catalog() -> FakeCatalogState:
    return FakeCatalogState([DB], [TABLE, VIEW])


def test_set_protection_records_the_flag_on_each_objects_own_stream_and_answers_it_as_stored():
    ctx, store = fake_context(_catalog())
    set_on = [
        SetProtection("table", WAREHOUSE.id, TABLE.id, True, META),
        SetProtection("view", WAREHOUSE.id, VIEW.id, True, META),
        SetProtection("namespace", WAREHOUSE.id, DB.id, True, META),
        SetProtection("warehouse", WAREHOUSE.id, WAREHOUSE.id, True, META),
    ]
    answers = [asyncio.run(handle_set_protection(command, ctx)) for command in set_on]
    assert [answer.protected for answer in answers] == [True] * 4
    assert store.appended == [
        TableProtectionSet(table_id=TABLE.id, warehouse_id=WAREHOUSE.id, protected=True),
        ViewProtectionSet(view_id=VIEW.id, warehouse_id=WAREHOUSE.id, protected=True),
        NamespaceProtectionSet(namespace_id=DB.id, warehouse_id=WAREHOUSE.id, protected=True),
        WarehouseProtectionSet(warehouse_id=WAREHOUSE.id, project_id=WAREHOUSE.project_id, protected=True),
    ]
    assert store.versions[f"table-{TABLE.id}"] == 8  # after the table's own events


def test_clearing_protection_records_it_and_answers_unprotected():
    ctx, store = fake_context(_catalog())
    assert isinstance(ctx.protections, FakeProtectionState)
    ctx.protections.protected.add(TABLE.id)
    cleared = asyncio.run(handle_set_protection(SetProtection("table", WAREHOUSE.id, TABLE.id, False, META), ctx))
    assert cleared == Protection(protected=False)
    assert store.appended == [TableProtectionSet(table_id=TABLE.id, warehouse_id=WAREHOUSE.id, protected=False)]


@pytest.mark.parametrize(
    ("kind", "object_id", "error"),
    [
        ("table", VIEW.id, NoSuchTableError),  # a view's id is no table
        ("view", uuid.UUID(int=404), NoSuchViewError),
        ("namespace", TABLE.id, NoSuchNamespaceError),
        ("warehouse", uuid.UUID(int=404), NoSuchWarehouseError),
    ],
)
def test_set_protection_refuses_a_missing_object_of_that_kind_and_appends_nothing(kind, object_id, error):
    ctx, store = fake_context(_catalog())
    with pytest.raises(error):
        asyncio.run(handle_set_protection(SetProtection(kind, WAREHOUSE.id, object_id, True, META), ctx))
    assert store.appended == []


def test_set_protection_refuses_an_object_of_another_warehouse():
    ctx, store = fake_context(_catalog())
    with pytest.raises(NoSuchTableError):
        asyncio.run(handle_set_protection(SetProtection("table", uuid.UUID(int=2), TABLE.id, True, META), ctx))
    assert store.appended == []
