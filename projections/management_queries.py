"""Queries over the management read models: server, projects, warehouses and what a warehouse holds."""

from __future__ import annotations

import uuid
from typing import Any

from catalog_es.database import Connection
from catalog_es.state import ProjectRow, WarehouseContents, WarehouseRow

WAREHOUSE_COLUMNS = (
    "SELECT id, project_id, name, location, storage_profile, status, delete_profile,"
    " storage_credential_id, storage_credential_fingerprint, version FROM warehouses"
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
