"""Protection without PostgreSQL: given a protected tabular, a drop appends nothing unless forced."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import WAREHOUSE, FakeCatalogState, FakeProtectionState, fake_context

from catalog_es.errors import ProtectedError
from catalog_es.events import TableDropped, ViewDropped
from catalog_es.identifiers import Namespace
from catalog_es.state import NamespaceRow, TabularRow
from catalog_es.store.eventstore import EventMetadata
from commands.tabular_lifecycle import DropTable, DropView, handle_drop_table, handle_drop_view

META = EventMetadata(actor="tester")
DB = Namespace(("db",))
NAMESPACE = NamespaceRow(id=uuid.UUID(int=10), warehouse_id=WAREHOUSE.id, parts=["db"], properties={}, version=1)
TABLE, VIEW = uuid.UUID(int=20), uuid.UUID(int=30)


def _row(kind: str, name: str, tabular_id: uuid.UUID) -> TabularRow:
    return TabularRow(
        id=tabular_id,
        warehouse_id=WAREHOUSE.id,
        namespace_id=NAMESPACE.id,
        namespace=["db"],
        name=name,
        location=f"file:///wh/db/{name}",
        metadata_location=f"file:///wh/db/{name}/metadata/00000.metadata.json",
        metadata={},
        version=3,
        kind=kind,  # type: ignore[arg-type]
    )


def test_drop_appends_nothing_when_protected_and_the_drop_event_when_forced():
    ctx, store = fake_context(FakeCatalogState([NAMESPACE], [_row("table", "t", TABLE), _row("view", "v", VIEW)]))
    assert isinstance(ctx.protections, FakeProtectionState)
    ctx.protections.protected.update({TABLE, VIEW})

    with pytest.raises(ProtectedError, match=r"Table db\.t is protected from being dropped: unprotect it first"):
        asyncio.run(handle_drop_table(DropTable(WAREHOUSE.id, DB, "t", False, META), ctx))
    with pytest.raises(ProtectedError, match=r"View db\.v is protected from being dropped"):
        asyncio.run(handle_drop_view(DropView(WAREHOUSE.id, DB, "v", META), ctx))
    assert store.appended == []

    asyncio.run(handle_drop_view(DropView(WAREHOUSE.id, DB, "v", META, force=True), ctx))
    asyncio.run(handle_drop_table(DropTable(WAREHOUSE.id, DB, "t", False, META, force=True), ctx))
    assert store.appended == [
        ViewDropped(view_id=VIEW, warehouse_id=WAREHOUSE.id),
        TableDropped(table_id=TABLE, warehouse_id=WAREHOUSE.id, purge_requested=False),
    ]
