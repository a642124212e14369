"""Command handlers without PostgreSQL: given read-model rows, when a command runs, then these events (or none)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import WAREHOUSE, FakeAccessState, FakeCatalogState, fake_context

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchTableError
from catalog_es.events import PrivilegeGranted, PrivilegeRevoked, TableRenamed, ViewDropped
from catalog_es.identifiers import Namespace
from catalog_es.state import NamespaceRow, TabularRow
from catalog_es.store.eventstore import EventMetadata
from commands.permissions import ChangeAssignments, handle_change_assignments
from commands.roles import CreateRole, handle_create_role
from commands.tabular_lifecycle import (
    DropTable,
    DropView,
    RenameTable,
    RenameView,
    handle_drop_table,
    handle_drop_view,
    handle_rename_table,
    handle_rename_view,
)

META = EventMetadata(actor="tester")
DB = Namespace(("db",))
NAMESPACE = NamespaceRow(id=uuid.UUID(int=10), warehouse_id=WAREHOUSE.id, parts=["db"], properties={}, version=1)


def _row(kind: str, name: str, number: int) -> TabularRow:
    return TabularRow(
        id=uuid.UUID(int=number),
        warehouse_id=WAREHOUSE.id,
        namespace_id=NAMESPACE.id,
        namespace=["db"],
        name=name,
        location=f"file:///wh/db/{name}",
        metadata_location=f"file:///wh/db/{name}/metadata/00000.metadata.json",
        metadata={},
        version=1,
        kind=kind,  # type: ignore[arg-type]
    )


def _catalog() -> FakeCatalogState:
    return FakeCatalogState(namespaces=[NAMESPACE], tabulars=[_row("table", "t", 20), _row("view", "v", 30)])


def _rename(source: str, destination: str) -> RenameTable:
    return RenameTable(WAREHOUSE.id, DB, source, DB, destination, META)


def test_rename_appends_nothing_when_the_other_kind_holds_the_name():
    ctx, store = fake_context(_catalog())
    with pytest.raises(AlreadyExistsError, match="View already exists"):
        asyncio.run(handle_rename_table(_rename("t", "V"), ctx))
    with pytest.raises(AlreadyExistsError, match="Table already exists"):
        asyncio.run(handle_rename_view(RenameView(WAREHOUSE.id, DB, "v", DB, "T", META), ctx))
    assert store.appended == []


def test_rename_records_one_event_at_the_row_version_when_only_the_case_changes():
    ctx, store = fake_context(_catalog())
    asyncio.run(handle_rename_table(_rename("t", "T"), ctx))
    [renamed] = store.appended
    assert isinstance(renamed, TableRenamed)
    assert (renamed.table_id, renamed.from_name, renamed.name) == (uuid.UUID(int=20), "t", "T")


def test_rename_refuses_before_reading_when_the_new_name_is_invalid():
    ctx, store = fake_context(_catalog())
    with pytest.raises(BadRequestError, match="Invalid table name"):
        asyncio.run(handle_rename_table(_rename("t", "a\x1fb"), ctx))
    assert store.appended == []


def test_drop_records_the_kinds_event_when_it_exists_and_nothing_when_it_does_not():
    ctx, store = fake_context(_catalog())
    asyncio.run(handle_drop_view(DropView(WAREHOUSE.id, DB, "v", META), ctx))
    with pytest.raises(NoSuchTableError, match=r"Table does not exist: db\.v"):
        asyncio.run(handle_drop_table(DropTable(WAREHOUSE.id, DB, "v", False, META), ctx))
    assert store.appended == [ViewDropped(view_id=uuid.UUID(int=30), warehouse_id=WAREHOUSE.id)]


def test_change_assignments_records_only_real_changes_when_some_are_already_held():
    table = uuid.UUID(int=20)
    access = FakeAccessState(granted={table: [("user:bob", "select"), ("user:carol", "modify")]})
    ctx, store = fake_context(_catalog(), access)
    writes = [("user:bob", "select"), ("user:carol", "select")]
    deletes = [("user:carol", "modify"), ("user:dan", "modify")]
    count = asyncio.run(handle_change_assignments(ChangeAssignments("table", table, writes, deletes, META), ctx))
    assert count == 2
    assert store.appended == [
        PrivilegeRevoked(object_kind="table", object_id=table, principal="user:carol", privilege="modify"),
        PrivilegeGranted(object_kind="table", object_id=table, principal="user:carol", privilege="select"),
    ]


def test_create_role_appends_nothing_when_the_project_has_the_name_in_another_case():
    project = uuid.UUID(int=5)
    ctx, store = fake_context(access=FakeAccessState(roles={(project, "readers"): uuid.UUID(int=6)}))
    with pytest.raises(AlreadyExistsError):
        asyncio.run(handle_create_role(CreateRole(project, "Readers", None, META), ctx))
    assert store.appended == []
