"""Queries over the soft-deleted read model: one hidden object, a recursive drop's subtree, the paged listing."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from psycopg.rows import class_row

from catalog_es.events import Json
from catalog_es.identifiers import NAMESPACE_SEPARATOR
from catalog_es.soft_delete import DeletedNamespaceRow, DeletedTabularRow, DeletedWarehouseRow, Member, Subtree
from catalog_es.state import TabularRow
from catalog_es.store.database import Connection
from catalog_es.store.logged_documents import recorded_metadata
from catalog_es.tabular_kind import TABLE, VIEW
from projections.catalog.tabular_rows import tabular_by_id

# The namespace it was in is live or hidden itself (a recursive drop); its creation time is the stream's first event.
_TABULAR = """
SELECT d.id, d.kind, d.warehouse_id, d.namespace_id,
       coalesce(n.parts, dn.parts, '{}') AS namespace, d.name, d.location, d.metadata_location,
       tabular_document(d.metadata, d.id, true) AS metadata, d.version,
       d.deleted_at, d.expires_at, d.purge_requested, d.actor, d.with_namespace, d.expiration_task_id,
       (SELECT e.time FROM catalog_events e WHERE e.stream_id = d.kind || '-' || d.id AND e.stream_version = 1)
         AS created_at
FROM deleted_tabulars d
LEFT JOIN namespaces n ON n.id = d.namespace_id
LEFT JOIN deleted_namespaces dn ON dn.id = d.namespace_id
"""
_NAMESPACE = (
    "SELECT id, warehouse_id, parts, version, deleted_at, expires_at, actor, with_namespace, expiration_task_id"
    " FROM deleted_namespaces"
)
_BELOW = f"(key = %s OR starts_with(key, %s || '{NAMESPACE_SEPARATOR}'))"


async def _rows(conn: Connection, query: str, params: tuple[Any, ...] | dict[str, Any]) -> list[tuple[Any, ...]]:
    cursor = await conn.execute(query.encode(), params)
    return list(await cursor.fetchall())


async def _deleted_tabulars(
    conn: Connection, where: str, params: tuple[Any, ...] | dict[str, Any]
) -> list[DeletedTabularRow]:
    """`_TABULAR` rows, built by column name."""
    async with conn.cursor(row_factory=class_row(DeletedTabularRow)) as cursor:
        await cursor.execute(f"{_TABULAR} {where}".encode(), params)
        return await cursor.fetchall()


class DeletedQueries:
    """Implements `catalog_es.soft_delete.SoftDeleteState` and the deleted-tabulars listing."""

    async def deleted_tabular(
        self, conn: Connection, warehouse_id: uuid.UUID, tabular_id: uuid.UUID
    ) -> DeletedTabularRow | None:
        rows = await _deleted_tabulars(conn, "WHERE d.warehouse_id = %s AND d.id = %s", (warehouse_id, tabular_id))
        return rows[0] if rows else None

    async def live_table(self, conn: Connection, warehouse_id: uuid.UUID, table_id: uuid.UUID) -> TabularRow | None:
        return await tabular_by_id(conn, TABLE, warehouse_id, table_id)

    async def recorded_metadata(self, conn: Connection, table_id: uuid.UUID, metadata_location: str) -> Json | None:
        return await recorded_metadata(conn, f"table-{table_id}", metadata_location)

    async def deleted_namespace(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace_id: uuid.UUID
    ) -> DeletedNamespaceRow | None:
        rows = await _rows(conn, f"{_NAMESPACE} WHERE warehouse_id = %s AND id = %s", (warehouse_id, namespace_id))
        return DeletedNamespaceRow(*rows[0]) if rows else None

    async def deleted_with(
        self, conn: Connection, root_id: uuid.UUID
    ) -> tuple[list[DeletedTabularRow], list[DeletedNamespaceRow]]:
        tabulars = await _deleted_tabulars(conn, "WHERE d.with_namespace = %s ORDER BY d.id", (root_id,))
        namespaces = await _rows(
            conn,
            f"{_NAMESPACE} WHERE id = %s OR with_namespace = %s ORDER BY cardinality(parts), key",
            (root_id, root_id),
        )
        return tabulars, [DeletedNamespaceRow(*row) for row in namespaces]

    async def deleted_warehouse(self, conn: Connection, warehouse_id: uuid.UUID) -> DeletedWarehouseRow | None:
        rows = await _rows(
            conn,
            "SELECT id, project_id, name, location, storage_credential_id, version, deleted_at, expires_at, actor,"
            " expiration_task_id FROM deleted_warehouses WHERE id = %s",
            (warehouse_id,),
        )
        return DeletedWarehouseRow(*rows[0]) if rows else None

    async def held_warehouse_locations(self, conn: Connection) -> list[str]:
        return [str(row[0]) for row in await _rows(conn, "SELECT location FROM deleted_warehouses", ())]

    async def hidden_in_warehouse(
        self, conn: Connection, warehouse_id: uuid.UUID
    ) -> tuple[list[DeletedTabularRow], list[DeletedNamespaceRow]]:
        tabulars = await _deleted_tabulars(conn, "WHERE d.warehouse_id = %s ORDER BY d.id", (warehouse_id,))
        namespaces = await _rows(
            conn, f"{_NAMESPACE} WHERE warehouse_id = %s ORDER BY cardinality(parts) DESC, key", (warehouse_id,)
        )
        return tabulars, [DeletedNamespaceRow(*row) for row in namespaces]

    async def live_subtree(self, conn: Connection, warehouse_id: uuid.UUID, key: str) -> Subtree:
        below = f"SELECT id FROM namespaces WHERE warehouse_id = %s AND {_BELOW}"
        params = (warehouse_id, key, key)
        tabular = (
            "SELECT t.id, t.version, t.namespace_id, t.name, '{{}}'::text[] FROM {} t WHERE t.namespace_id IN ({})"
        )
        tables = await _rows(conn, tabular.format(TABLE.relation, below) + " ORDER BY t.id", params)
        views = await _rows(conn, tabular.format(VIEW.relation, below) + " ORDER BY t.id", params)
        namespaces = await _rows(
            conn,
            f"SELECT id, version, id, '', parts FROM namespaces WHERE warehouse_id = %s AND {_BELOW}"
            " ORDER BY cardinality(parts) DESC, key",
            params,
        )
        return Subtree(
            tables=[Member(*row) for row in tables],
            views=[Member(*row) for row in views],
            namespaces=[Member(*row) for row in namespaces],
        )

    async def hidden_in(self, conn: Connection, warehouse_id: uuid.UUID, key: str) -> list[DeletedTabularRow]:
        below = f"SELECT id FROM namespaces WHERE warehouse_id = %s AND {_BELOW}"
        return await _deleted_tabulars(
            conn, f"WHERE d.namespace_id IN ({below}) ORDER BY d.id", (warehouse_id, key, key)
        )

    async def list_deleted_tabulars(
        self,
        conn: Connection,
        warehouse_id: uuid.UUID,
        *,
        namespace_id: uuid.UUID | None,
        after: tuple[datetime, uuid.UUID] | None,
        limit: int,
        visible_to: list[str] | None = None,
        implying: list[str] | None = None,
    ) -> list[DeletedTabularRow]:
        """Oldest deletion first, after the (deleted_at, id) `after`; `visible_to` keeps what those principals
        may describe (grants on the tabular or an ancestor survive its soft drop)."""
        clauses = ["d.warehouse_id = %(warehouse)s"]
        params: dict[str, Any] = {"warehouse": warehouse_id, "limit": limit}
        if namespace_id is not None:
            clauses.append("d.namespace_id = %(namespace)s")
            params["namespace"] = namespace_id
        if after is not None:
            clauses.append("(d.deleted_at, d.id) > (%(after_time)s, %(after_id)s)")
            params.update(after_time=after[0], after_id=after[1])
        if visible_to is not None:
            clauses.append(
                "EXISTS (SELECT 1 FROM authz_objects o JOIN authz_grants g ON g.object_id = ANY(o.ancestors)"
                " WHERE o.id = d.id AND g.principal = ANY(%(principals)s) AND g.privilege = ANY(%(implying)s))"
            )
            params.update(principals=visible_to, implying=implying or [])
        where = f"WHERE {' AND '.join(clauses)} ORDER BY d.deleted_at, d.id LIMIT %(limit)s"
        return await _deleted_tabulars(conn, where, params)
