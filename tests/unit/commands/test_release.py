"""Releasing a table or view to another catalog without PostgreSQL (the whole hand-off, export, release and import
into a second catalog: tests/e2e/test_catalog_handoff.py)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import WAREHOUSE, FakeCatalogState, FakeProtectionState, fake_context, namespace_row, tabular_row

from catalog_es.errors import NoSuchTableError, NoSuchViewError, ProtectedError
from catalog_es.events import TableDropped, ViewDropped
from catalog_es.identifiers import Namespace
from catalog_es.state import TabularKindName
from catalog_es.store.eventstore import EventMetadata
from commands.release import ReleaseTabular, handle_release

META = EventMetadata(actor="tester")
DB = namespace_row("db", number=10)
TABLE = tabular_row("table", DB, "t", 20, version=4)
VIEW = tabular_row("view", DB, "v", 30, version=2)
ELSEWHERE = "https://other.example.com/catalog"


def _release(kind: TabularKindName, name: str, tabular_id=TABLE.id) -> ReleaseTabular:
    return ReleaseTabular(WAREHOUSE.id, tabular_id, Namespace(("db",)), name, kind, ELSEWHERE, META)


def test_release_drops_without_purge_and_says_where_it_went():
    ctx, store = fake_context(FakeCatalogState([DB], [TABLE, VIEW]))
    assert asyncio.run(handle_release(_release("table", "T"), ctx)) is None  # names match in any case
    asyncio.run(handle_release(_release("view", "v", VIEW.id), ctx))
    assert store.appended == [
        TableDropped(table_id=TABLE.id, warehouse_id=WAREHOUSE.id, purge_requested=False),
        ViewDropped(view_id=VIEW.id, warehouse_id=WAREHOUSE.id),
    ]
    assert [m.released_to for m in store.appended_metadata] == [ELSEWHERE, ELSEWHERE]
    assert {m.actor for m in store.appended_metadata} == {"tester"}
    assert store.versions == {f"table-{TABLE.id}": 5, f"view-{VIEW.id}": 3}


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (_release("table", "gone"), NoSuchTableError),
        (_release("table", "v", VIEW.id), NoSuchTableError),  # a view by that name is no table
        (_release("view", "t", TABLE.id), NoSuchViewError),
        # the table asked for was renamed meanwhile and another one took its name
        (_release("table", "t", uuid.UUID(int=21)), NoSuchTableError),
    ],
)
def test_release_refuses_what_is_not_there_under_that_name_and_id(command, error):
    ctx, store = fake_context(FakeCatalogState([DB], [TABLE, VIEW]))
    with pytest.raises(error):
        asyncio.run(handle_release(command, ctx))
    assert store.appended == []


def test_release_refuses_a_protected_table_and_has_no_force():
    ctx, store = fake_context(FakeCatalogState([DB], [TABLE]))
    assert isinstance(ctx.protections, FakeProtectionState)
    ctx.protections.protected.add(TABLE.id)
    with pytest.raises(ProtectedError):
        asyncio.run(handle_release(_release("table", "t"), ctx))
    assert store.appended == []
