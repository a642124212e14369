"""The `protections` read model (inline): which warehouses, namespaces, tables and views may not be dropped."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from psycopg import sql

from catalog_es.events import Event, NamespaceDropped, TableDropped, ViewDropped, WarehouseDeleted
from catalog_es.events.protection import (
    NamespaceProtectionSet,
    TableProtectionSet,
    ViewProtectionSet,
    WarehouseProtectionSet,
)
from catalog_es.identifiers import NAMESPACE_SEPARATOR, Namespace
from catalog_es.protection import ProtectableKind, ProtectedObject, Protection
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.migrations import Migration

PROTECTION_TABLES = ("protections",)
PROTECTION_MIGRATIONS = (
    Migration(
        "0601_protections",
        """
        CREATE TABLE IF NOT EXISTS protections (
            id uuid PRIMARY KEY,
            kind text NOT NULL,
            warehouse_id uuid NOT NULL,
            protected boolean NOT NULL,
            updated_at timestamptz NOT NULL
        );
        CREATE INDEX IF NOT EXISTS protections_warehouse ON protections (warehouse_id) WHERE protected;
        """,
    ),
)

_SET = (
    "INSERT INTO protections (id, kind, warehouse_id, protected, updated_at) VALUES (%s, %s, %s, %s, %s)"
    " ON CONFLICT (id) DO UPDATE SET protected = excluded.protected, updated_at = excluded.updated_at"
)


PROTECTION_TOPICS: tuple[type[Event], ...] = (
    WarehouseProtectionSet,
    NamespaceProtectionSet,
    TableProtectionSet,
    ViewProtectionSet,
    TableDropped,
    ViewDropped,
    NamespaceDropped,
    WarehouseDeleted,
)


async def project_protection(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Apply events in order; `updated_at` is the event's own time, so a replay writes the same rows."""
    for recorded in events:
        event = recorded.decode()
        if isinstance(event, WarehouseProtectionSet | NamespaceProtectionSet | TableProtectionSet | ViewProtectionSet):
            row = (event.entity_id, event.entity, event.warehouse_id, event.protected, recorded.time)
            await conn.execute(_SET, row)
        elif isinstance(event, TableDropped | ViewDropped | NamespaceDropped):
            await conn.execute("DELETE FROM protections WHERE id = %s", (event.entity_id,))
        elif isinstance(event, WarehouseDeleted):
            await conn.execute("DELETE FROM protections WHERE warehouse_id = %s", (event.warehouse_id,))


class ProtectionReadModel:
    """The `ProtectionState` port over the read model (and the catalog's own tables for names and versions)."""

    async def protection(self, conn: Connection, object_id: uuid.UUID) -> Protection:
        return await protection(conn, object_id)

    async def protected_inside(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace | None = None, limit: int = 10
    ) -> list[ProtectedObject]:
        return await protected_inside(conn, warehouse_id, namespace, limit)

    async def current_version(
        self, conn: Connection, kind: ProtectableKind, warehouse_id: uuid.UUID, object_id: uuid.UUID
    ) -> int | None:
        owner = "id" if kind == "warehouse" else "warehouse_id"  # a warehouse is its own container
        query = sql.SQL("SELECT version FROM {} WHERE id = %s AND {} = %s").format(
            sql.Identifier(_RELATIONS[kind]), sql.Identifier(owner)
        )
        cursor = await conn.execute(query, (object_id, warehouse_id))
        row = await cursor.fetchone()
        return int(row[0]) if row else None


_RELATIONS: dict[ProtectableKind, str] = {
    "warehouse": "warehouses",
    "namespace": "namespaces",
    "table": "tables",
    "view": "views",
}


async def protection(conn: Connection, object_id: uuid.UUID) -> Protection:
    """The flag of one object (unprotected when never set)."""
    cursor = await conn.execute("SELECT protected, updated_at FROM protections WHERE id = %s", (object_id,))
    row = await cursor.fetchone()
    return Protection(bool(row[0]), row[1]) if row else Protection()


async def protected_ids(conn: Connection, object_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
    """Which of these objects are protected (one query for a listing)."""
    cursor = await conn.execute("SELECT id FROM protections WHERE id = ANY(%s) AND protected", (list(object_ids),))
    return {row[0] for row in await cursor.fetchall()}


# Everything protected inside a warehouse, or inside a namespace subtree (the namespace itself included),
# with a readable name: `ns.sub` for a namespace, `ns.sub.t` for a table or view.
_INSIDE = """
SELECT p.kind, p.id, array_to_string(n.parts, '.') FROM protections p JOIN namespaces n ON n.id = p.id
WHERE p.protected AND p.warehouse_id = %(warehouse)s AND (%(all)s OR n.key = %(key)s OR n.key LIKE %(below)s)
UNION ALL
SELECT p.kind, p.id, array_to_string(n.parts, '.') || '.' || t.name FROM protections p
JOIN (SELECT id, namespace_id, name FROM tables UNION ALL SELECT id, namespace_id, name FROM views) t ON t.id = p.id
JOIN namespaces n ON n.id = t.namespace_id
WHERE p.protected AND p.warehouse_id = %(warehouse)s AND (%(all)s OR n.key = %(key)s OR n.key LIKE %(below)s)
ORDER BY 3 LIMIT %(limit)s
"""


async def protected_inside(
    conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace | None = None, limit: int = 10
) -> list[ProtectedObject]:
    """Protected namespaces, tables and views of the warehouse (None) or of a namespace's subtree."""
    key = namespace.key if namespace is not None else ""
    below = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + NAMESPACE_SEPARATOR + "%"
    params = {"warehouse": warehouse_id, "all": namespace is None, "key": key, "below": below, "limit": limit}
    cursor = await conn.execute(_INSIDE.encode(), params)
    return [ProtectedObject(str(kind), id_, str(name)) for kind, id_, name in await cursor.fetchall()]
