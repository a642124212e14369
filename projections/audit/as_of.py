"""The catalog as it was at a past instant, for operators: listed from the one as-of index engines read through."""

from __future__ import annotations

import uuid
from datetime import datetime

import msgspec

from catalog_es.store.database import Connection
from catalog_es.store.logged_documents import document_at
from projections.catalog.as_of import Snapshot, replay


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


class _Pointers(msgspec.Struct):
    """The fields of a metadata document the listing shows (the rest is never decoded)."""

    current_snapshot_id: int | None = msgspec.field(default=None, name="current-snapshot-id")
    current_schema_id: int | None = msgspec.field(default=None, name="current-schema-id")
    current_version_id: int | None = msgspec.field(default=None, name="current-version-id")


_POINTERS = msgspec.json.Decoder(_Pointers)


async def position_at(conn: Connection, at: datetime) -> int:
    """The last position recorded at or before `at` (positions follow commit order, times the commit clock)."""
    cursor = await conn.execute(
        "SELECT global_position FROM catalog_events WHERE time <= %s ORDER BY global_position DESC LIMIT 1", (at,)
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def catalog_as_of(conn: Connection, at: datetime) -> CatalogAsOf:
    """Every namespace, table and view at `at`, ordered by warehouse, namespace and name."""
    position = await position_at(conn, at)
    namespaces, tables, views = await listing_at(conn, position)
    return CatalogAsOf(time=at, position=position, namespaces=namespaces, tables=tables, views=views)


async def listing_at(
    conn: Connection, position: int
) -> tuple[list[NamespaceAsOf], list[TabularAsOf], list[TabularAsOf]]:
    """(namespaces, tables, views) after the event at `position`."""
    snapshot = await replay(conn, position)
    namespaces = [
        NamespaceAsOf(id=row.id, warehouse_id=row.warehouse_id, namespace=row.parts, properties=row.properties)
        for _, row in sorted(snapshot.namespaces.items())
    ]
    return namespaces, await _tabulars(conn, snapshot, "table"), await _tabulars(conn, snapshot, "view")


async def _tabulars(conn: Connection, snapshot: Snapshot, kind: str) -> list[TabularAsOf]:
    listed: list[TabularAsOf] = []
    placed = sorted(
        (snapshot.namespace_ids[namespace_id], key, tabular)
        for (namespace_id, key), tabular in snapshot.tabulars[kind].items()
    )
    for namespace_place, _, tabular in placed:  # by warehouse, namespace key, then name key
        namespace = snapshot.namespaces[namespace_place]
        location, document = await document_at(conn, f"{kind}-{tabular.id}", tabular.metadata_position)
        pointers = _POINTERS.decode(document)
        listed.append(
            TabularAsOf(
                id=tabular.id,
                warehouse_id=namespace.warehouse_id,
                namespace=namespace.parts,
                name=tabular.name,
                metadata_location=location,
                current_snapshot_id=_id_or_none(pointers.current_snapshot_id),
                current_schema_id=_id_or_none(pointers.current_schema_id),
                current_version_id=_id_or_none(pointers.current_version_id),
            )
        )
    return listed


def _id_or_none(value: int | None) -> int | None:
    # Iceberg v1 metadata may say -1 for "no current snapshot".
    return value if value is not None and value >= 0 else None
