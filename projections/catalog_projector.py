"""The inline projector: applies catalog events to the read models inside the append transaction."""

from __future__ import annotations

from collections.abc import Sequence
from functools import singledispatch

from psycopg import sql
from psycopg.types.json import Jsonb

from catalog_es.database import Connection
from catalog_es.events import (
    Event,
    NamespaceCreated,
    NamespaceDropped,
    NamespacePropertiesUpdated,
    ProjectCreated,
    TableCommitted,
    TableCreated,
    TableDropped,
    TableEvent,
    TableRegistered,
    TableRenamed,
    ViewCommitted,
    ViewCreated,
    ViewDropped,
    ViewEvent,
    ViewRegistered,
    ViewRenamed,
    WarehouseCreated,
)
from catalog_es.eventstore import RecordedEvent
from catalog_es.identifiers import Namespace, name_key
from catalog_es.locations import normalize_location

READ_MODEL_TABLES = ("projects", "warehouses", "namespaces", "tables", "views")


async def project_catalog(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Apply events in order; the same function serves requests and rebuilds."""
    for recorded in events:
        await _apply(recorded.decode(), conn, recorded.stream_version)


@singledispatch
async def _apply(event: Event, conn: Connection, version: int) -> None:
    raise TypeError(f"No catalog projection for {type(event).__name__}")


@_apply.register
async def _(event: ProjectCreated, conn: Connection, version: int) -> None:
    await conn.execute("INSERT INTO projects (id, name) VALUES (%s, %s)", (event.project_id, event.name))


@_apply.register
async def _(event: WarehouseCreated, conn: Connection, version: int) -> None:
    await conn.execute(
        "INSERT INTO warehouses (id, project_id, name, name_key, location, storage_profile)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (
            event.warehouse_id,
            event.project_id,
            event.name,
            name_key(event.name),
            normalize_location(event.storage_profile["location"]),
            Jsonb(event.storage_profile),
        ),
    )


@_apply.register
async def _(event: NamespaceCreated, conn: Connection, version: int) -> None:
    namespace = Namespace(tuple(event.namespace))
    parent = namespace.parent
    await conn.execute(
        "INSERT INTO namespaces (id, warehouse_id, parts, key, parent_key, properties, version)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (
            event.namespace_id,
            event.warehouse_id,
            list(namespace.parts),
            namespace.key,
            parent.key if parent else "",
            Jsonb(event.properties),
            version,
        ),
    )


@_apply.register
async def _(event: NamespacePropertiesUpdated, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE namespaces SET properties = (properties - %s::text[]) || %s, version = %s WHERE id = %s",
        (event.removed, Jsonb(event.updated), version, event.namespace_id),
    )


@_apply.register
async def _(event: NamespaceDropped, conn: Connection, version: int) -> None:
    await conn.execute("DELETE FROM namespaces WHERE id = %s", (event.namespace_id,))


# Tables and views are projected alike, each into its own relation.
Tabular = TableEvent | ViewEvent


def _relation(event: Tabular) -> sql.Identifier:
    return sql.Identifier("tables" if isinstance(event, TableEvent) else "views")


@_apply.register(TableCreated)
@_apply.register(TableRegistered)
@_apply.register(ViewCreated)
@_apply.register(ViewRegistered)
async def _insert_tabular(
    event: TableCreated | TableRegistered | ViewCreated | ViewRegistered, conn: Connection, version: int
) -> None:
    query = sql.SQL(
        "INSERT INTO {} (id, warehouse_id, namespace_id, name, name_key, location, metadata_location,"
        " metadata, version) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (id) DO UPDATE SET namespace_id = excluded.namespace_id, name = excluded.name,"
        " name_key = excluded.name_key, location = excluded.location,"
        " metadata_location = excluded.metadata_location, metadata = excluded.metadata, version = excluded.version"
    ).format(_relation(event))
    await conn.execute(
        query,
        (
            event.entity_id,
            event.warehouse_id,
            event.namespace_id,
            event.name,
            name_key(event.name),
            normalize_location(event.metadata["location"]),
            event.metadata_location,
            Jsonb(event.metadata),
            version,
        ),
    )


@_apply.register(TableCommitted)
@_apply.register(ViewCommitted)
async def _commit_tabular(event: TableCommitted | ViewCommitted, conn: Connection, version: int) -> None:
    query = sql.SQL(
        "UPDATE {} SET location = %s, metadata_location = %s, metadata = %s, version = %s WHERE id = %s"
    ).format(_relation(event))
    location = normalize_location(event.metadata["location"])
    await conn.execute(query, (location, event.metadata_location, Jsonb(event.metadata), version, event.entity_id))


@_apply.register(TableRenamed)
@_apply.register(ViewRenamed)
async def _rename_tabular(event: TableRenamed | ViewRenamed, conn: Connection, version: int) -> None:
    query = sql.SQL("UPDATE {} SET namespace_id = %s, name = %s, name_key = %s, version = %s WHERE id = %s")
    await conn.execute(
        query.format(_relation(event)),
        (event.namespace_id, event.name, name_key(event.name), version, event.entity_id),
    )


@_apply.register(TableDropped)
@_apply.register(ViewDropped)
async def _drop_tabular(event: TableDropped | ViewDropped, conn: Connection, version: int) -> None:
    await conn.execute(sql.SQL("DELETE FROM {} WHERE id = %s").format(_relation(event)), (event.entity_id,))
