"""Namespace commands without PostgreSQL: create, update properties and drop, given namespace and table rows."""

from __future__ import annotations

import asyncio

import pytest
from fakes import (
    WAREHOUSE,
    FakeCatalogState,
    FakeProtectionState,
    FakeSoftDeleteState,
    deleted_row,
    fake_context,
    namespace_row,
    tabular_row,
)

from catalog_es.errors import (
    AlreadyExistsError,
    BadRequestError,
    NamespaceDepthExceededError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    ProtectedError,
    UnprocessableEntityError,
)
from catalog_es.events import NamespaceCreated, NamespaceDropped, NamespacePropertiesUpdated, TableDropped
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.namespaces import (
    CreateNamespace,
    DropNamespace,
    UpdateNamespaceProperties,
    handle_create_namespace,
    handle_drop_namespace,
    handle_update_namespace_properties,
)

META = EventMetadata(actor="tester")
DB = namespace_row("db", number=10, version=2)


def _create(*parts: str, properties: dict[str, str] | None = None, max_depth: int | None = None) -> CreateNamespace:
    return CreateNamespace(WAREHOUSE.id, Namespace(parts), properties or {}, META, max_depth=max_depth)


def test_create_namespace_records_it_below_its_parent_with_a_default_location_inside_the_warehouse():
    ctx, store = fake_context(FakeCatalogState([DB]))
    properties = asyncio.run(handle_create_namespace(_create("db", "Sales", properties={"owner": "ann"}), ctx))
    [created] = store.appended
    assert isinstance(created, NamespaceCreated)
    assert (created.warehouse_id, created.namespace) == (WAREHOUSE.id, ["db", "Sales"])
    assert created.properties == properties
    assert properties["owner"] == "ann"
    assert properties["location"] == f"file:///wh/{created.namespace_id}"


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (_create("DB"), AlreadyExistsError),  # the name is taken in another case
        (_create("missing", "child"), NoSuchNamespaceError),
        (_create("a", "b", "c", max_depth=2), NamespaceDepthExceededError),
        (_create("bad\x1fname"), BadRequestError),
        (_create("elsewhere", properties={"location": "file:///other/place"}), BadRequestError),
    ],
)
def test_create_namespace_refuses_and_appends_nothing(command, error):
    ctx, store = fake_context(FakeCatalogState([DB]))
    with pytest.raises(error):
        asyncio.run(handle_create_namespace(command, ctx))
    assert store.appended == []


def test_update_properties_records_the_change_at_the_row_version_and_reports_missing_removals():
    ctx, store = fake_context(FakeCatalogState([DB]))
    command = UpdateNamespaceProperties(WAREHOUSE.id, Namespace(("Db",)), {"owner": "bo"}, ["location", "nope"], META)
    summary = asyncio.run(handle_update_namespace_properties(command, ctx))
    assert (summary.updated, summary.removed, summary.missing) == (["owner"], ["location"], ["nope"])
    assert store.appended == [
        NamespacePropertiesUpdated(
            namespace_id=DB.id, warehouse_id=WAREHOUSE.id, updated={"owner": "bo"}, removed=["location"]
        )
    ]
    assert store.versions[f"namespace-{DB.id}"] == 3


@pytest.mark.parametrize(
    ("namespace", "updates", "removals", "error"),
    [
        ("db", {"owner": "bo"}, ["owner"], UnprocessableEntityError),
        ("missing", {"owner": "bo"}, [], NoSuchNamespaceError),
        ("db", {"location": "file:///outside"}, [], BadRequestError),
    ],
)
def test_update_properties_refuses_and_appends_nothing(namespace, updates, removals, error):
    ctx, store = fake_context(FakeCatalogState([DB]))
    command = UpdateNamespaceProperties(WAREHOUSE.id, Namespace((namespace,)), updates, removals, META)
    with pytest.raises(error):
        asyncio.run(handle_update_namespace_properties(command, ctx))
    assert store.appended == []


def test_drop_namespace_records_the_drop_of_an_empty_namespace():
    ctx, store = fake_context(FakeCatalogState([DB]))
    asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db",)), META), ctx))
    assert store.appended == [NamespaceDropped(namespace_id=DB.id, warehouse_id=WAREHOUSE.id)]


def test_drop_namespace_refuses_one_holding_a_table_or_a_child_and_a_missing_one():
    child = namespace_row("db", "child", number=11)
    table = tabular_row("table", child, "t", 20)
    ctx, store = fake_context(FakeCatalogState([DB, child], [table]))
    with pytest.raises(NamespaceNotEmptyError):
        asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db",)), META), ctx))
    with pytest.raises(NamespaceNotEmptyError):
        asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db", "child")), META), ctx))
    with pytest.raises(NoSuchNamespaceError):
        asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("gone",)), META), ctx))
    assert store.appended == []


def test_drop_namespace_refuses_a_protected_one_unless_forced():
    ctx, store = fake_context(FakeCatalogState([DB]))
    assert isinstance(ctx.protections, FakeProtectionState)
    ctx.protections.protected.add(DB.id)
    with pytest.raises(ProtectedError):
        asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db",)), META), ctx))
    assert store.appended == []
    asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db",)), META, force=True), ctx))
    assert store.appended == [NamespaceDropped(namespace_id=DB.id, warehouse_id=WAREHOUSE.id)]


def test_recursive_drop_on_a_hard_warehouse_drops_tables_then_namespaces_deepest_first():
    child = namespace_row("db", "child", number=11)
    table = tabular_row("table", child, "t", 20, version=4)
    catalog = FakeCatalogState([DB, child], [table])
    ctx, store = fake_context(catalog, soft_deletes=FakeSoftDeleteState(catalog))
    asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db",)), META, recursive=True), ctx))
    assert store.appended == [
        TableDropped(table_id=table.id, warehouse_id=WAREHOUSE.id, purge_requested=False),
        NamespaceDropped(namespace_id=child.id, warehouse_id=WAREHOUSE.id),
        NamespaceDropped(namespace_id=DB.id, warehouse_id=WAREHOUSE.id),
    ]


def test_drop_namespace_refuses_one_still_holding_a_soft_dropped_table():
    catalog = FakeCatalogState([DB])
    hidden = deleted_row(tabular_row("table", DB, "old", 21))
    ctx, store = fake_context(catalog, soft_deletes=FakeSoftDeleteState(catalog, tabulars=[hidden]))
    with pytest.raises(NamespaceNotEmptyError, match="soft-dropped"):
        asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db",)), META), ctx))
    assert store.appended == []


def test_drop_namespace_refuses_when_a_table_inside_is_protected_but_not_for_one_elsewhere():
    other = namespace_row("other", number=12)
    outer = tabular_row("table", other, "t", 21)
    ctx, store = fake_context(FakeCatalogState([DB, other], [outer]))
    assert isinstance(ctx.protections, FakeProtectionState)
    ctx.protections.protected.add(outer.id)
    with pytest.raises(ProtectedError, match=r"table other\.t is protected"):
        asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("other",)), META), ctx))
    assert store.appended == []
    asyncio.run(handle_drop_namespace(DropNamespace(WAREHOUSE.id, Namespace(("db",)), META), ctx))
    assert store.appended == [NamespaceDropped(namespace_id=DB.id, warehouse_id=WAREHOUSE.id)]
