"""The inline projector: applies catalog events to the read models inside the append transaction."""

from __future__ import annotations

from collections.abc import Sequence
from functools import singledispatch

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
    TableRegistered,
    TableRenamed,
    ViewCommitted,
    ViewCreated,
    ViewDropped,
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


async def _insert_table(conn: Connection, event: TableCreated | TableRegistered, version: int) -> None:
    await conn.execute(
        "INSERT INTO tables (id, warehouse_id, namespace_id, name, name_key, location, metadata_location,"
        " metadata, version) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (id) DO UPDATE SET namespace_id = excluded.namespace_id, name = excluded.name,"
        " name_key = excluded.name_key, location = excluded.location,"
        " metadata_location = excluded.metadata_location, metadata = excluded.metadata, version = excluded.version",
        (
            event.table_id,
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


@_apply.register
async def _(event: TableCreated, conn: Connection, version: int) -> None:
    await _insert_table(conn, event, version)


@_apply.register
async def _(event: TableRegistered, conn: Connection, version: int) -> None:
    await _insert_table(conn, event, version)


@_apply.register
async def _(event: TableCommitted, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE tables SET location = %s, metadata_location = %s, metadata = %s, version = %s WHERE id = %s",
        (
            normalize_location(event.metadata["location"]),
            event.metadata_location,
            Jsonb(event.metadata),
            version,
            event.table_id,
        ),
    )


@_apply.register
async def _(event: TableRenamed, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE tables SET namespace_id = %s, name = %s, name_key = %s, version = %s WHERE id = %s",
        (event.namespace_id, event.name, name_key(event.name), version, event.table_id),
    )


@_apply.register
async def _(event: TableDropped, conn: Connection, version: int) -> None:
    await conn.execute("DELETE FROM tables WHERE id = %s", (event.table_id,))


async def _insert_view(conn: Connection, event: ViewCreated | ViewRegistered, version: int) -> None:
    await conn.execute(
        "INSERT INTO views (id, warehouse_id, namespace_id, name, name_key, location, metadata_location,"
        " metadata, version) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (id) DO UPDATE SET namespace_id = excluded.namespace_id, name = excluded.name,"
        " name_key = excluded.name_key, location = excluded.location,"
        " metadata_location = excluded.metadata_location, metadata = excluded.metadata, version = excluded.version",
        (
            event.view_id,
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


@_apply.register
async def _(event: ViewCreated, conn: Connection, version: int) -> None:
    await _insert_view(conn, event, version)


@_apply.register
async def _(event: ViewRegistered, conn: Connection, version: int) -> None:
    await _insert_view(conn, event, version)


@_apply.register
async def _(event: ViewCommitted, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE views SET location = %s, metadata_location = %s, metadata = %s, version = %s WHERE id = %s",
        (
            normalize_location(event.metadata["location"]),
            event.metadata_location,
            Jsonb(event.metadata),
            version,
            event.view_id,
        ),
    )


@_apply.register
async def _(event: ViewRenamed, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE views SET namespace_id = %s, name = %s, name_key = %s, version = %s WHERE id = %s",
        (event.namespace_id, event.name, name_key(event.name), version, event.view_id),
    )


@_apply.register
async def _(event: ViewDropped, conn: Connection, version: int) -> None:
    await conn.execute("DELETE FROM views WHERE id = %s", (event.view_id,))
