"""The catalog as it was at a past instant, rebuilt from the log alone by replaying the inline projector."""

from __future__ import annotations

import uuid
from datetime import datetime

import msgspec
from psycopg import sql

from catalog_es.store.database import Connection
from projections.registry import CATALOG
from projections.replay import replay, scratch_schema


class NamespaceAsOf(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace: list[str]
    properties: dict[str, str]


class TabularAsOf(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """A table or view: where it was, what its metadata pointer was, its current snapshot and schema."""

    id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace: list[str]
    name: str
    metadata_location: str
    current_snapshot_id: int | None = None
    current_schema_id: int | None = None
    current_version_id: int | None = None  # views only


class CatalogAsOf(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """`position` is the last event at or before `time` (0: nothing had happened yet)."""

    time: datetime
    position: int
    namespaces: list[NamespaceAsOf]
    tables: list[TabularAsOf]
    views: list[TabularAsOf]


async def position_at(conn: Connection, at: datetime) -> int:
    """The last position recorded at or before `at` (positions follow commit order, times the commit clock)."""
    cursor = await conn.execute(
        "SELECT global_position FROM catalog_events WHERE time <= %s ORDER BY global_position DESC LIMIT 1", (at,)
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def catalog_as_of(conn: Connection, at: datetime) -> CatalogAsOf:
    """Replay events up to `at` into a scratch schema in a transaction that is always rolled back."""
    async with conn.transaction(force_rollback=True):
        position = await position_at(conn, at)
        async with scratch_schema(conn, CATALOG, purpose="as_of", unique=True):
            await replay(conn, CATALOG.apply, position)
            return CatalogAsOf(
                time=at,
                position=position,
                namespaces=await _namespaces(conn),
                tables=await _tabulars(conn, "tables"),
                views=await _tabulars(conn, "views"),
            )


async def _namespaces(conn: Connection) -> list[NamespaceAsOf]:
    cursor = await conn.execute("SELECT id, warehouse_id, parts, properties FROM namespaces ORDER BY warehouse_id, key")
    return [
        NamespaceAsOf(id=row[0], warehouse_id=row[1], namespace=list(row[2]), properties=dict(row[3]))
        for row in await cursor.fetchall()
    ]


async def _tabulars(conn: Connection, relation: str) -> list[TabularAsOf]:
    query = sql.SQL(
        "SELECT t.id, t.warehouse_id, n.parts, t.name, t.metadata_location, t.metadata->'current-snapshot-id',"
        " t.metadata->'current-schema-id', t.metadata->'current-version-id'"
        " FROM {} t JOIN namespaces n ON n.id = t.namespace_id ORDER BY t.warehouse_id, n.key, t.name_key"
    ).format(sql.Identifier(relation))
    cursor = await conn.execute(query)
    return [
        TabularAsOf(
            id=row[0],
            warehouse_id=row[1],
            namespace=list(row[2]),
            name=row[3],
            metadata_location=row[4],
            current_snapshot_id=_int_or_none(row[5]),
            current_schema_id=_int_or_none(row[6]),
            current_version_id=_int_or_none(row[7]),
        )
        for row in await cursor.fetchall()
    ]


def _int_or_none(value: object) -> int | None:
    # Iceberg v1 metadata may say -1 for "no current snapshot".
    return int(value) if isinstance(value, int) and value >= 0 else None
