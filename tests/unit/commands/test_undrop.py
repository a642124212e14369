"""Undrop without PostgreSQL: soft-dropped tables, views and namespace trees come back, all or none.

Cancelling the expiration tasks afterwards locks their queue rows (`store.task_queue.locked_task`, SQL): that
step is tested against PostgreSQL (tests/integration/test_soft_delete.py, test_ended_expiration_tasks.py);
the rows here carry no task.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from fakes import (
    WAREHOUSE,
    FakeCatalogState,
    FakeSoftDeleteState,
    deleted_row,
    fake_context,
    namespace_row,
    tabular_row,
)

from catalog_es.errors import (
    AlreadyExistsError,
    BadRequestError,
    InvalidLocationError,
    NoSuchNamespaceError,
    NoSuchTableError,
)
from catalog_es.events.lifecycle import NamespaceUndropped, TableUndropped, ViewUndropped
from catalog_es.soft_delete import DeletedNamespaceRow
from catalog_es.store.eventstore import EventMetadata
from commands.undrop import UndropTabulars, UndropTarget, handle_undrop_tabulars

META = EventMetadata(actor="tester")
DB = namespace_row("db", number=10)
TABLE = tabular_row("table", DB, "t", 20, version=3)
VIEW = tabular_row("view", DB, "v", 30, version=2)


def _context(live: list, hidden: list, namespaces: list | None = None):
    catalog = FakeCatalogState([DB], live)
    deleted = FakeSoftDeleteState(catalog, tabulars=hidden, namespaces=namespaces or [])
    return fake_context(catalog, soft_deletes=deleted)


def _undrop(*targets: UndropTarget) -> UndropTabulars:
    return UndropTabulars(WAREHOUSE.id, list(targets), META)


def test_undrop_brings_a_table_and_a_view_back_under_their_names_or_new_ones():
    ctx, store = _context([], [deleted_row(TABLE), deleted_row(VIEW)])
    restored = asyncio.run(
        handle_undrop_tabulars(_undrop(UndropTarget("table", TABLE.id), UndropTarget("view", VIEW.id, "v2")), ctx)
    )
    assert [(r.kind, r.id, r.name) for r in restored] == [("table", TABLE.id, "t"), ("view", VIEW.id, "v2")]
    assert store.appended == [
        TableUndropped(table_id=TABLE.id, warehouse_id=WAREHOUSE.id, namespace_id=DB.id, name="t", from_name="t"),
        ViewUndropped(view_id=VIEW.id, warehouse_id=WAREHOUSE.id, namespace_id=DB.id, name="v2", from_name="v"),
    ]


def test_undrop_is_all_or_nothing_when_one_name_is_taken_meanwhile():
    taker = tabular_row("table", DB, "V", 40)  # took the view's name (in another case)
    ctx, store = _context([taker], [deleted_row(TABLE), deleted_row(VIEW)])
    with pytest.raises(AlreadyExistsError, match="pass a new"):
        asyncio.run(
            handle_undrop_tabulars(_undrop(UndropTarget("table", TABLE.id), UndropTarget("view", VIEW.id)), ctx)
        )
    assert store.appended == []


def test_undrop_refuses_a_table_whose_location_another_table_took():
    taker = msgspec.structs.replace(tabular_row("table", DB, "t", 40), name="other")  # at `…/db/t`
    ctx, store = _context([taker], [deleted_row(TABLE)])
    with pytest.raises(InvalidLocationError, match="location"):
        asyncio.run(handle_undrop_tabulars(_undrop(UndropTarget("table", TABLE.id)), ctx))
    assert store.appended == []


@pytest.mark.parametrize(
    ("target", "error"),
    [
        (UndropTarget("table", VIEW.id), NoSuchTableError),  # a view's id is no table
        (UndropTarget("table", uuid.UUID(int=404)), NoSuchTableError),
        (UndropTarget("namespace", uuid.UUID(int=404)), NoSuchNamespaceError),
        (UndropTarget("table", TABLE.id, "bad\x1fname"), BadRequestError),
    ],
)
def test_undrop_refuses_missing_targets_and_bad_names(target, error):
    ctx, store = _context([], [deleted_row(TABLE), deleted_row(VIEW)])
    with pytest.raises(error):
        asyncio.run(handle_undrop_tabulars(_undrop(target), ctx))
    assert store.appended == []


def _hidden_namespace(parts: list[str], number: int, root: uuid.UUID | None) -> DeletedNamespaceRow:
    now = datetime.now(UTC)
    return DeletedNamespaceRow(
        uuid.UUID(int=number), WAREHOUSE.id, parts, 1, now, now + timedelta(days=1), "tester", root, None
    )


def test_undrop_of_a_namespace_brings_its_tree_back_parents_first_and_refuses_its_members_alone():
    root_id = uuid.UUID(int=11)
    gone = namespace_row("gone", number=11)
    root = _hidden_namespace(["gone"], 11, None)
    child = _hidden_namespace(["gone", "child"], 12, root_id)
    table = deleted_row(tabular_row("table", gone, "t", 21), with_namespace=root_id)
    ctx, store = _context([], [table], [child, root])
    with pytest.raises(BadRequestError, match="dropped with its namespace"):
        asyncio.run(handle_undrop_tabulars(_undrop(UndropTarget("table", table.id)), ctx))
    with pytest.raises(BadRequestError, match="undrop that one"):
        asyncio.run(handle_undrop_tabulars(_undrop(UndropTarget("namespace", child.id)), ctx))
    assert store.appended == []
    restored = asyncio.run(handle_undrop_tabulars(_undrop(UndropTarget("namespace", root_id)), ctx))
    assert [(r.kind, r.name) for r in restored] == [("namespace", "gone"), ("namespace", "child"), ("table", "t")]
    assert store.appended == [
        NamespaceUndropped(namespace_id=root_id, warehouse_id=WAREHOUSE.id, namespace=["gone"]),
        NamespaceUndropped(namespace_id=child.id, warehouse_id=WAREHOUSE.id, namespace=["gone", "child"]),
        TableUndropped(table_id=table.id, warehouse_id=WAREHOUSE.id, namespace_id=gone.id, name="t", from_name="t"),
    ]


def test_undrop_of_a_namespace_refuses_when_its_name_is_taken_meanwhile():
    root = _hidden_namespace(["DB"], 11, None)  # a live `db` holds the name now
    ctx, store = _context([], [], [root])
    with pytest.raises(AlreadyExistsError):
        asyncio.run(handle_undrop_tabulars(_undrop(UndropTarget("namespace", root.id)), ctx))
    assert store.appended == []
