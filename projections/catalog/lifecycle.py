"""The inline projection of soft deletion: rows move between the live relations and the `deleted_*` ones."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import singledispatch

from psycopg import sql
from psycopg.types.json import Jsonb

from catalog_es.events import Event, TableEvent, ViewEvent
from catalog_es.events.lifecycle import (
    NamespaceExpired,
    NamespaceSoftDropped,
    NamespaceUndropped,
    TableExpired,
    TableRestored,
    TableSoftDropped,
    TableUndropped,
    ViewExpired,
    ViewSoftDropped,
    ViewUndropped,
    WarehouseSoftDeleted,
    WarehouseUndeleted,
)
from catalog_es.identifiers import name_key
from catalog_es.locations import location_key
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.tabular_kind import kind_of
from projections.catalog.document_entries import delete_entries, document_head, move_entries, write_entries

DELETED_TABLES = ("deleted_tabulars", "deleted_namespaces", "deleted_warehouses")

_TABULAR_COLUMNS = "id, warehouse_id, namespace_id, name, name_key, location, metadata_location, metadata"
_NAMESPACE_COLUMNS = "id, warehouse_id, parts, key, parent_key, properties"
_WAREHOUSE_COLUMNS = (
    "id, project_id, name, name_key, location, storage_profile, status, delete_profile, storage_credential_id,"
    " storage_credential_fingerprint, server_side_rebase, scan_planning"
)


async def project_lifecycle(event: Event, conn: Connection, recorded: RecordedEvent) -> None:
    """Apply one soft-deletion event (`project_catalog` hands these over with their time and actor)."""
    await _apply(event, conn, recorded)


def _relation(event: TableEvent | ViewEvent) -> sql.Identifier:
    return sql.Identifier(kind_of(event).relation)


def _actor(recorded: RecordedEvent) -> str | None:
    actor = recorded.extensions.get("actor")
    return str(actor) if actor is not None else None


@singledispatch
async def _apply(event: Event, conn: Connection, recorded: RecordedEvent) -> None:
    raise TypeError(f"No lifecycle projection for {type(event).__name__}")


@_apply.register(TableSoftDropped)
@_apply.register(ViewSoftDropped)
async def _(event: TableSoftDropped | ViewSoftDropped, conn: Connection, recorded: RecordedEvent) -> None:
    expires = datetime.fromtimestamp(event.expires_at_ms / 1000, UTC)
    await conn.execute(
        sql.SQL(
            f"INSERT INTO deleted_tabulars (kind, {_TABULAR_COLUMNS}, version, deleted_at, expires_at,"
            f" purge_requested, actor, with_namespace, expiration_task_id)"
            f" SELECT %s, {_TABULAR_COLUMNS}, %s, %s, %s, %s, %s, %s, %s"
            " FROM {} WHERE id = %s"
        ).format(_relation(event)),
        (
            kind_of(event).name,
            recorded.stream_version,
            recorded.time,
            expires,
            event.purge_requested,
            _actor(recorded),
            event.with_namespace,
            event.expiration_task_id,
            event.entity_id,
        ),
    )
    await conn.execute(sql.SQL("DELETE FROM {} WHERE id = %s").format(_relation(event)), (event.entity_id,))
    if isinstance(event, TableSoftDropped):  # its history lists' rows go with it (a new table may take its id)
        await move_entries(conn, event.entity_id, dropped=True)


@_apply.register(TableUndropped)
@_apply.register(ViewUndropped)
async def _(event: TableUndropped | ViewUndropped, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        sql.SQL(
            f"INSERT INTO {{}} ({_TABULAR_COLUMNS}, version) SELECT id, warehouse_id, %s, %s, %s, location,"
            " metadata_location, metadata, %s FROM deleted_tabulars WHERE id = %s"
        ).format(_relation(event)),
        (event.namespace_id, event.name, name_key(event.name), recorded.stream_version, event.entity_id),
    )
    await conn.execute("DELETE FROM deleted_tabulars WHERE id = %s", (event.entity_id,))
    if isinstance(event, TableUndropped):
        await move_entries(conn, event.entity_id, dropped=False)


@_apply.register(TableExpired)
@_apply.register(ViewExpired)
async def _(event: TableExpired | ViewExpired, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute("DELETE FROM deleted_tabulars WHERE id = %s", (event.entity_id,))
    if isinstance(event, TableExpired):
        await delete_entries(conn, event.entity_id, dropped=True)


@_apply.register
async def _(event: TableRestored, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE tables SET location = %s, metadata_location = %s, metadata = %s, version = %s WHERE id = %s",
        (
            location_key(event.metadata["location"]),
            event.metadata_location,
            Jsonb(document_head(event.metadata)),
            recorded.stream_version,
            event.table_id,
        ),
    )
    await write_entries(conn, event.table_id, event.metadata)


@_apply.register
async def _(event: NamespaceSoftDropped, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        f"INSERT INTO deleted_namespaces ({_NAMESPACE_COLUMNS}, version, deleted_at, expires_at, actor,"
        f" with_namespace, expiration_task_id) SELECT {_NAMESPACE_COLUMNS}, %s, %s, %s, %s, %s, %s"
        " FROM namespaces WHERE id = %s".encode(),
        (
            recorded.stream_version,
            recorded.time,
            datetime.fromtimestamp(event.expires_at_ms / 1000, UTC),
            _actor(recorded),
            event.with_namespace,
            event.expiration_task_id,
            event.namespace_id,
        ),
    )
    await conn.execute("DELETE FROM namespaces WHERE id = %s", (event.namespace_id,))


@_apply.register
async def _(event: NamespaceUndropped, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        f"INSERT INTO namespaces ({_NAMESPACE_COLUMNS}, version) SELECT {_NAMESPACE_COLUMNS}, %s"
        " FROM deleted_namespaces WHERE id = %s".encode(),
        (recorded.stream_version, event.namespace_id),
    )
    await conn.execute("DELETE FROM deleted_namespaces WHERE id = %s", (event.namespace_id,))


@_apply.register
async def _(event: NamespaceExpired, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute("DELETE FROM deleted_namespaces WHERE id = %s", (event.namespace_id,))


@_apply.register
async def _(event: WarehouseSoftDeleted, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        f"INSERT INTO deleted_warehouses ({_WAREHOUSE_COLUMNS}, version, deleted_at, expires_at, actor,"
        f" expiration_task_id) SELECT {_WAREHOUSE_COLUMNS}, %s, %s, %s, %s, %s FROM warehouses WHERE id = %s".encode(),
        (
            recorded.stream_version,
            recorded.time,
            datetime.fromtimestamp(event.expires_at_ms / 1000, UTC),
            _actor(recorded),
            event.expiration_task_id,
            event.warehouse_id,
        ),
    )
    await conn.execute("DELETE FROM warehouses WHERE id = %s", (event.warehouse_id,))


@_apply.register
async def _(event: WarehouseUndeleted, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        f"INSERT INTO warehouses ({_WAREHOUSE_COLUMNS}, version) SELECT id, project_id, %s, %s, location,"
        " storage_profile, status, delete_profile, storage_credential_id, storage_credential_fingerprint,"
        " server_side_rebase, scan_planning, %s FROM deleted_warehouses WHERE id = %s".encode(),
        (event.name, name_key(event.name), recorded.stream_version, event.warehouse_id),
    )
    await conn.execute("DELETE FROM deleted_warehouses WHERE id = %s", (event.warehouse_id,))
