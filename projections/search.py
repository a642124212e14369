"""The `tabular_search` read model: one row per live table or view with its namespace path, for name search."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import singledispatch

import msgspec

from catalog_es.events import (
    Event,
    NamespaceCreated,
    NamespaceDropped,
    TableCreated,
    TableDropped,
    TableRegistered,
    TableRenamed,
    ViewCreated,
    ViewDropped,
    ViewRegistered,
    ViewRenamed,
)
from catalog_es.events.lifecycle import (
    NamespaceExpired,
    TableSoftDropped,
    TableUndropped,
    ViewSoftDropped,
    ViewUndropped,
)
from catalog_es.identifiers import name_key
from catalog_es.privileges import IMPLIED_BY
from catalog_es.state import TabularKindName
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.migrations import Migration
from catalog_es.tabular_kind import kind_named, kind_of
from projections.topics import dispatched

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
            kind_of(event).name,
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
@_apply.register(TableSoftDropped)
@_apply.register(ViewSoftDropped)
async def _(event: TableDropped | ViewDropped | TableSoftDropped | ViewSoftDropped, conn: Connection) -> None:
    await conn.execute("DELETE FROM tabular_search WHERE id = %s", (event.entity_id,))


@_apply.register(TableUndropped)
@_apply.register(ViewUndropped)
async def _(event: TableUndropped | ViewUndropped, conn: Connection) -> None:
    """Back under its (maybe new) name; a soft-dropped namespace kept its `search_namespaces` row for this."""
    await conn.execute(
        "INSERT INTO tabular_search (id, warehouse_id, kind, namespace_id, namespace, name, name_key)"
        f" VALUES (%s, %s, %s, %s, {_NAMESPACE}, %s, %s)",
        (
            event.entity_id,
            event.warehouse_id,
            kind_of(event).name,
            event.namespace_id,
            event.namespace_id,
            event.name,
            name_key(event.name),
        ),
    )


@_apply.register
async def _(event: NamespaceExpired, conn: Connection) -> None:
    await conn.execute("DELETE FROM search_namespaces WHERE id = %s", (event.namespace_id,))


class SearchHit(msgspec.Struct, frozen=True, rename="kebab"):
    """One live table or view whose name matches; `namespace-id` lets a client link without another lookup."""

    kind: TabularKindName
    id: uuid.UUID
    namespace: list[str]
    namespace_id: uuid.UUID
    name: str


# Names that start with the text come first, then those that merely contain it; `visible` limits the hits
# to tabulars on which (or on an ancestor of which) the principals hold a describe-implying grant.
_SEARCH = """
SELECT s.kind, s.id, s.namespace, s.namespace_id, s.name FROM tabular_search s
WHERE s.warehouse_id = %(warehouse)s AND (strpos(s.name_key, %(text)s) > 0 OR s.id = %(id)s)
  AND (NOT %(filtered)s OR EXISTS (
    SELECT 1 FROM authz_objects o JOIN authz_grants g ON g.object_id = ANY(o.ancestors)
    WHERE o.id = s.id AND g.principal = ANY(%(principals)s) AND g.privilege = ANY(%(implying)s)))
ORDER BY s.id IS DISTINCT FROM %(id)s, strpos(s.name_key, %(text)s) <> 1, s.name_key, s.namespace
LIMIT %(limit)s"""


async def search_tabulars(
    conn: Connection,
    warehouse_id: uuid.UUID,
    text: str,
    limit: int,
    visible_to: Sequence[str] | None = None,
    tabular_id: uuid.UUID | None = None,
) -> list[SearchHit]:
    """Tables and views of the warehouse whose name contains `text` (case-insensitive), or whose id is
    `tabular_id` (that one first).

    `visible_to` is the caller's principals when the caller cannot describe the whole warehouse: only what
    they hold describe on (directly or inherited) is returned, as in the catalog's listings.
    """
    params = {
        "warehouse": warehouse_id,
        "text": name_key(text),
        "limit": limit,
        "id": tabular_id,
        "filtered": visible_to is not None,
        "principals": list(visible_to or ()),
        "implying": list(IMPLIED_BY["describe"]),
    }
    cursor = await conn.execute(_SEARCH.encode(), params)
    return [
        SearchHit(
            kind=kind_named(kind).name, id=id_, namespace=list(namespace), namespace_id=namespace_id, name=str(name)
        )
        for kind, id_, namespace, namespace_id, name in await cursor.fetchall()
    ]


# What this projector takes from the log: the events it has a function for (its fallback does nothing).
SEARCH_TOPICS = dispatched(_apply)
