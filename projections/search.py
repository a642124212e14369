"""The `tabular_search` read model: one row per live table or view with its namespace path, for name search."""

from __future__ import annotations

from collections.abc import Sequence
from functools import singledispatch

from catalog_es.events import (
    Event,
    NamespaceCreated,
    NamespaceDropped,
    TableCreated,
    TableDropped,
    TableEvent,
    TableRegistered,
    TableRenamed,
    ViewCreated,
    ViewDropped,
    ViewRegistered,
    ViewRenamed,
)
from catalog_es.identifiers import name_key
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.migrations import Migration

SEARCH_TABLES = ("search_namespaces", "tabular_search")
SEARCH_MIGRATIONS = (
    Migration(
        "0503_tabular_search",
        """
        CREATE TABLE IF NOT EXISTS search_namespaces (id uuid PRIMARY KEY, parts text[] NOT NULL);
        CREATE TABLE IF NOT EXISTS tabular_search (
            id uuid PRIMARY KEY,
            warehouse_id uuid NOT NULL,
            kind text NOT NULL,
            namespace_id uuid NOT NULL,
            namespace text[] NOT NULL,
            name text NOT NULL,
            name_key text NOT NULL
        );
        CREATE INDEX IF NOT EXISTS tabular_search_name ON tabular_search (warehouse_id, name_key text_pattern_ops);
        """,
    ),
)

_NAMESPACE = "coalesce((SELECT parts FROM search_namespaces WHERE id = %s), '{}')"


async def project_search(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Apply events in order (only namespace and table/view lifecycle events change the index)."""
    for recorded in events:
        await _apply(recorded.decode(), conn)


@singledispatch
async def _apply(event: Event, conn: Connection) -> None:
    return  # commits and property changes do not change names


@_apply.register
async def _(event: NamespaceCreated, conn: Connection) -> None:
    await conn.execute(
        "INSERT INTO search_namespaces (id, parts) VALUES (%s, %s)", (event.namespace_id, list(event.namespace))
    )


@_apply.register
async def _(event: NamespaceDropped, conn: Connection) -> None:
    await conn.execute("DELETE FROM search_namespaces WHERE id = %s", (event.namespace_id,))


@_apply.register(TableCreated)
@_apply.register(TableRegistered)
@_apply.register(ViewCreated)
@_apply.register(ViewRegistered)
async def _(event: TableCreated | TableRegistered | ViewCreated | ViewRegistered, conn: Connection) -> None:
    await conn.execute(
        "INSERT INTO tabular_search (id, warehouse_id, kind, namespace_id, namespace, name, name_key)"
        f" VALUES (%s, %s, %s, %s, {_NAMESPACE}, %s, %s) ON CONFLICT (id) DO UPDATE SET"
        " namespace_id = excluded.namespace_id, namespace = excluded.namespace, name = excluded.name,"
        " name_key = excluded.name_key",
        (
            event.entity_id,
            event.warehouse_id,
            "table" if isinstance(event, TableEvent) else "view",
            event.namespace_id,
            event.namespace_id,
            event.name,
            name_key(event.name),
        ),
    )


@_apply.register(TableRenamed)
@_apply.register(ViewRenamed)
async def _(event: TableRenamed | ViewRenamed, conn: Connection) -> None:
    await conn.execute(
        f"UPDATE tabular_search SET namespace_id = %s, namespace = {_NAMESPACE}, name = %s, name_key = %s"
        " WHERE id = %s",
        (event.namespace_id, event.namespace_id, event.name, name_key(event.name), event.entity_id),
    )


@_apply.register(TableDropped)
@_apply.register(ViewDropped)
async def _(event: TableDropped | ViewDropped, conn: Connection) -> None:
    await conn.execute("DELETE FROM tabular_search WHERE id = %s", (event.entity_id,))
