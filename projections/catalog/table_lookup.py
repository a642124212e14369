"""A table by its id, with what an engine needs to name it: project, warehouse name, namespace and table name."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.store.database import Connection

_TABLE_BY_ID = (
    "SELECT w.id, w.project_id, w.name, w.status, n.parts, t.name FROM tables t"
    " JOIN namespaces n ON n.id = t.namespace_id JOIN warehouses w ON w.id = t.warehouse_id WHERE t.id = %s"
)


class TableTarget(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    project_id: uuid.UUID
    warehouse: str
    warehouse_status: str
    namespace: list[str]
    name: str

    @property
    def warehouse_reference(self) -> str:
        """`<project id>/<warehouse name>`: what `/config?warehouse=` resolves in any project."""
        return f"{self.project_id}/{self.warehouse}"


async def table_target(conn: Connection, table_id: uuid.UUID) -> TableTarget | None:
    """The live table with this id (None when dropped or never created)."""
    cursor = await conn.execute(_TABLE_BY_ID.encode(), (table_id,))
    row = await cursor.fetchone()
    return TableTarget(*row) if row else None
