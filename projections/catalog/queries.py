"""Queries over the inline read models: server, projects, warehouses, namespaces, tables, listings."""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.rows import class_row

from catalog_es.identifiers import Namespace, name_key
from catalog_es.locations import location_key
from catalog_es.state import (
    ClaimConflict,
    NamespaceRow,
    ProjectRow,
    TabularHead,
    TabularRow,
    WarehouseContents,
    WarehouseRow,
)
from catalog_es.store.database import Connection
from catalog_es.tabular_kind import TABLE, VIEW
from projections.catalog.deleted_queries import DeletedQueries
from projections.catalog.tabular_rows import fetch_tabular, tabular_select

WAREHOUSE_COLUMNS = (
    "SELECT id, project_id, name, location, storage_profile, status, delete_profile,"
    " storage_credential_id, storage_credential_fingerprint, version, server_side_rebase,"
    " scan_planning FROM warehouses"
)


async def _rows(conn: Connection, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    cursor = await conn.execute(query.encode(), params)
    return list(await cursor.fetchall())


class ManagementQueries:
    """The management half of `catalog_es.state.CatalogState`, plus the listings of the management API."""

    async def server_id(self, conn: Connection) -> uuid.UUID | None:
        rows = await _rows(conn, "SELECT id FROM server_info", ())
        return rows[0][0] if rows else None

    async def server_is_operator(self, conn: Connection) -> bool:
        rows = await _rows(conn, "SELECT is_operator FROM server_info", ())
        return bool(rows and rows[0][0])

    async def project(self, conn: Connection, project_id: uuid.UUID) -> ProjectRow | None:
        rows = await _rows(conn, "SELECT id, name, version FROM projects WHERE id = %s", (project_id,))
        return ProjectRow(*rows[0]) if rows else None

    async def list_projects(self, conn: Connection) -> list[ProjectRow]:
        return [
            ProjectRow(*row)
            for row in await _rows(conn, "SELECT id, name, version FROM projects ORDER BY name, id", ())
        ]

    async def warehouses_in_project(self, conn: Connection, project_id: uuid.UUID) -> list[WarehouseRow]:
        query = f"{WAREHOUSE_COLUMNS} WHERE project_id = %s ORDER BY name_key"
        return [WarehouseRow(*row) for row in await _rows(conn, query, (project_id,))]

    async def all_warehouses(self, conn: Connection) -> list[WarehouseRow]:
        """Every warehouse of every project (locations must not overlap across the server)."""
        return [WarehouseRow(*row) for row in await _rows(conn, f"{WAREHOUSE_COLUMNS} ORDER BY id", ())]

    async def warehouse_contents(self, conn: Connection, warehouse_id: uuid.UUID) -> WarehouseContents:
        tables = await _rows(conn, "SELECT id, version FROM tables WHERE warehouse_id = %s", (warehouse_id,))
        views = await _rows(conn, "SELECT id, version FROM views WHERE warehouse_id = %s", (warehouse_id,))
        namespaces = await _rows(
            conn,
            "SELECT id, version FROM namespaces WHERE warehouse_id = %s ORDER BY cardinality(parts) DESC, key",
            (warehouse_id,),
        )
        return WarehouseContents(
            tables=[(row[0], row[1]) for row in tables],
            views=[(row[0], row[1]) for row in views],
            namespaces=[(row[0], row[1]) for row in namespaces],
        )


_NAMESPACE = "SELECT id, warehouse_id, parts, properties, version FROM namespaces"
_BY_NAME = " WHERE n.warehouse_id = %s AND n.key = %s AND t.name_key = %s"
_TABLE_HEAD = (
    "SELECT t.id, t.warehouse_id, t.namespace_id, n.parts AS namespace, t.name, t.location, t.metadata_location,"
    f" t.version, 'table' AS kind FROM tables t JOIN namespaces n ON n.id = t.namespace_id{_BY_NAME}"
)
_TABLE_DOCUMENT = (
    "SELECT t.metadata_location, tabular_document_text(t.metadata, t.id)"
    " FROM tables t JOIN namespaces n ON n.id = t.namespace_id"
    " WHERE n.warehouse_id = %s AND n.key = %s AND t.name_key = %s"
)
# The same with the log head read in the same statement (one snapshot): what a request reads the head for (the
# warehouse cache's `confirmed`) and the table are of one moment, after the request arrived. Always one row.
_TABLE_DOCUMENT_AT_HEAD = (
    b"SELECT c.position, d.metadata_location, d.document FROM catalog_event_counter c LEFT JOIN LATERAL ("
    b"SELECT t.metadata_location, tabular_document_text(t.metadata, t.id) AS document"
    b" FROM tables t JOIN namespaces n ON n.id = t.namespace_id"
    b" WHERE n.warehouse_id = %s AND n.key = %s AND t.name_key = %s) d ON true"
)
# `~>=~`/`~<~` are the byte-wise operators of the `tables_location` index (text_pattern_ops).
_LOCATION_TAKEN = (
    "(SELECT 1 FROM tables WHERE warehouse_id = %s AND id IS DISTINCT FROM %s AND location = ANY(%s)"
    " UNION ALL SELECT 1 FROM tables WHERE warehouse_id = %s AND id IS DISTINCT FROM %s"
    " AND location ~>=~ %s AND location ~<~ %s) LIMIT 1"
)
_CLAIM_CONFLICT = (
    "SELECT CASE"
    " WHEN EXISTS (SELECT 1 FROM tables WHERE namespace_id = %s AND name_key = %s)"
    " OR EXISTS (SELECT 1 FROM views WHERE namespace_id = %s AND name_key = %s) THEN 'name'"
    " WHEN EXISTS (SELECT 1 FROM tables WHERE id = %s) THEN 'id'"
    f" WHEN EXISTS ({_LOCATION_TAKEN}) THEN 'location' END"
)
_TABLE = tabular_select(TABLE) + _BY_NAME
_VIEW = tabular_select(VIEW) + _BY_NAME


async def _one(conn: Connection, query: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
    cursor = await conn.execute(query.encode(), params)
    row: tuple[Any, ...] | None = await cursor.fetchone()
    return row


def _overlap_params(warehouse_id: uuid.UUID, location: str, except_table: uuid.UUID | None) -> tuple[Any, ...]:
    """`_LOCATION_TAKEN`'s parameters: the location and its ancestors; the key range of its descendants."""
    canonical = location_key(location)
    ancestors = [canonical[:i] for i, char in enumerate(canonical) if char == "/"] + [canonical]
    below = canonical.rstrip("/") + "/"  # descendants sort in [below, below with its "/" raised to "0")
    return (warehouse_id, except_table, ancestors, warehouse_id, except_table, below, below[:-1] + "0")


class CatalogReadModel(ManagementQueries, DeletedQueries):
    """Implements `catalog_es.state.CatalogState` (and `SoftDeleteState`) and the listing queries of the catalog API."""

    async def project_exists(self, conn: Connection, project_id: uuid.UUID) -> bool:
        return await _one(conn, "SELECT 1 FROM projects WHERE id = %s", (project_id,)) is not None

    async def warehouse_by_name(self, conn: Connection, project_id: uuid.UUID, name: str) -> WarehouseRow | None:
        row = await _one(
            conn, f"{WAREHOUSE_COLUMNS} WHERE project_id = %s AND name_key = %s", (project_id, name_key(name))
        )
        return WarehouseRow(*row) if row else None

    async def warehouse_by_id(self, conn: Connection, warehouse_id: uuid.UUID) -> WarehouseRow | None:
        row = await _one(conn, f"{WAREHOUSE_COLUMNS} WHERE id = %s", (warehouse_id,))
        return WarehouseRow(*row) if row else None

    async def namespace(self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace) -> NamespaceRow | None:
        row = await _one(conn, f"{_NAMESPACE} WHERE warehouse_id = %s AND key = %s", (warehouse_id, namespace.key))
        return NamespaceRow(*row) if row else None

    async def namespace_is_empty(self, conn: Connection, row: NamespaceRow) -> bool:
        found = await _one(
            conn,
            "SELECT 1 WHERE EXISTS (SELECT 1 FROM tables WHERE namespace_id = %s)"
            " OR EXISTS (SELECT 1 FROM views WHERE namespace_id = %s)"
            " OR EXISTS (SELECT 1 FROM namespaces WHERE warehouse_id = %s AND parent_key = %s)",
            (row.id, row.id, row.warehouse_id, row.namespace.key),
        )
        return found is None

    async def table(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        return await fetch_tabular(conn, _TABLE, (warehouse_id, namespace.key, name_key(name)))

    async def table_head(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularHead | None:
        async with conn.cursor(row_factory=class_row(TabularHead)) as cursor:
            await cursor.execute(_TABLE_HEAD.encode(), (warehouse_id, namespace.key, name_key(name)))
            return await cursor.fetchone()

    async def table_document(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> tuple[str, bytes] | None:
        """The metadata location and the metadata JSON as stored, for loadTable to send without re-encoding."""
        row = await _one(conn, _TABLE_DOCUMENT, (warehouse_id, namespace.key, name_key(name)))
        return (str(row[0]), str(row[1]).encode()) if row else None

    async def table_document_at_head(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> tuple[int | None, tuple[str, bytes] | None]:
        """`table_document` and the log head (None: the log has no counter row, nothing read), in one statement."""
        cursor = await conn.execute(_TABLE_DOCUMENT_AT_HEAD, (warehouse_id, namespace.key, name_key(name)))
        row = await cursor.fetchone()
        if row is None:
            return None, None
        head, location, document = row
        return int(head), None if location is None else (str(location), str(document).encode())

    async def table_id_taken(self, conn: Connection, table_id: uuid.UUID) -> bool:
        return await _one(conn, "SELECT 1 FROM tables WHERE id = %s", (table_id,)) is not None

    async def table_name_taken(self, conn: Connection, namespace_id: uuid.UUID, name: str) -> bool:
        """Tables and views share one name space per namespace (spec: "already exists as a table or view")."""
        found = await _one(
            conn,
            "SELECT 1 WHERE EXISTS (SELECT 1 FROM tables WHERE namespace_id = %s AND name_key = %s)"
            " OR EXISTS (SELECT 1 FROM views WHERE namespace_id = %s AND name_key = %s)",
            (namespace_id, name_key(name), namespace_id, name_key(name)),
        )
        return found is not None

    async def view(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        return await fetch_tabular(conn, _VIEW, (warehouse_id, namespace.key, name_key(name)))

    async def view_id_taken(self, conn: Connection, view_id: uuid.UUID) -> bool:
        return await _one(conn, "SELECT 1 FROM views WHERE id = %s", (view_id,)) is not None

    async def location_taken(
        self, conn: Connection, warehouse_id: uuid.UUID, location: str, except_table: uuid.UUID | None = None
    ) -> bool:
        """Another table at `location`, above it or below it: two index searches, also at 100 k tables."""
        return await _one(conn, _LOCATION_TAKEN, _overlap_params(warehouse_id, location, except_table)) is not None

    async def table_claim_conflict(
        self,
        conn: Connection,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        table_id: uuid.UUID,
        location: str,
    ) -> ClaimConflict | None:
        """Name, id and location checks of a new table in one round trip (they run under the write lock)."""
        key = name_key(name)
        params = (namespace_id, key, namespace_id, key, table_id, *_overlap_params(warehouse_id, location, table_id))
        row = await _one(conn, _CLAIM_CONFLICT, params)
        conflict: ClaimConflict | None = row[0] if row else None
        return conflict

    async def list_namespaces(
        self, conn: Connection, warehouse_id: uuid.UUID, parent: Namespace | None, after: str, limit: int | None
    ) -> list[list[str]]:
        """Child namespaces of `parent` (top level when None), ordered by key, after the key `after`."""
        cursor = await conn.execute(
            f"{_NAMESPACE} WHERE warehouse_id = %s AND parent_key = %s AND key > %s ORDER BY key LIMIT %s".encode(),
            (warehouse_id, parent.key if parent else "", after, limit),
        )
        return [NamespaceRow(*row).parts for row in await cursor.fetchall()]

    async def list_tables(self, conn: Connection, namespace_id: uuid.UUID, after: str, limit: int | None) -> list[str]:
        cursor = await conn.execute(
            "SELECT name FROM tables WHERE namespace_id = %s AND name_key > %s ORDER BY name_key LIMIT %s",
            (namespace_id, after, limit),
        )
        return [str(row[0]) for row in await cursor.fetchall()]

    async def list_views(self, conn: Connection, namespace_id: uuid.UUID, after: str, limit: int | None) -> list[str]:
        cursor = await conn.execute(
            "SELECT name FROM views WHERE namespace_id = %s AND name_key > %s ORDER BY name_key LIMIT %s",
            (namespace_id, after, limit),
        )
        return [str(row[0]) for row in await cursor.fetchall()]
