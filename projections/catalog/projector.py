"""The inline projector: applies catalog events to the read models inside the append transaction."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import singledispatch

from psycopg import sql
from psycopg.types.json import Jsonb

from catalog_es.events import (
    CATALOG_EVENTS,
    Event,
    Json,
    NamespaceCreated,
    NamespaceDropped,
    NamespacePropertiesUpdated,
    ProjectCreated,
    ProjectDeleted,
    ProjectRenamed,
    SecretReference,
    ServerBootstrapped,
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
    WarehouseActivated,
    WarehouseCreated,
    WarehouseCredentialUpdated,
    WarehouseDeactivated,
    WarehouseDeleted,
    WarehouseDeleteProfileUpdated,
    WarehouseRenamed,
    WarehouseScanPlanningUpdated,
    WarehouseServerSideRebaseUpdated,
    WarehouseStorageUpdated,
)
from catalog_es.events.lifecycle import LIFECYCLE_EVENTS
from catalog_es.events.protection import (
    PROTECTION_EVENTS,
    NamespaceProtectionSet,
    ProtectionSet,
    TableProtectionSet,
    ViewProtectionSet,
    WarehouseProtectionSet,
)
from catalog_es.identifiers import Namespace, name_key
from catalog_es.locations import location_key
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.storage.delete_profiles import HARD_DELETE
from catalog_es.storage.profiles import base_location, decode_profile
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.tabular_kind import kind_of
from projections.catalog.document_entries import (
    Stored,
    commit_document,
    delete_entries,
    document_head,
    write_entries,
)
from projections.catalog.lifecycle import DELETED_TABLES, project_lifecycle
from projections.catalog.tabular_documents import TabularDocuments

# The catalog's own events, soft deletion's and the protection flags' (which move an object's version); users and
# grants, tasks and maintenance have read models of their own and never reach this projector.
CATALOG_TOPICS: tuple[type[Event], ...] = (*CATALOG_EVENTS, *LIFECYCLE_EVENTS, *PROTECTION_EVENTS)
READ_MODEL_TABLES = (
    "server_info",
    "projects",
    "warehouses",
    "namespaces",
    "tables",
    "table_document_entries",
    "views",
    *DELETED_TABLES,
)


# A batch's commits to one tabular write its row once, with the last document (a rebuild replays thousands of
# commits per table and batch); written before any other event. A pending row's document is the next commit's base.
_PENDING_ROWS = 16
_COMMITS = (TableCommitted, ViewCommitted)
_Pending = dict[uuid.UUID, tuple[TableCommitted | ViewCommitted, Json, RecordedEvent, Stored | None]]


class CatalogProjector:
    """Applies events in order; the same projector serves requests and rebuilds.

    `documents` keeps metadata documents by location for replaying commits (`TabularDocuments`): the composition
    root passes the one its commands share; `project_catalog` makes one per call.
    """

    def __init__(self, documents: MetadataDocuments) -> None:
        self._kept = documents
        self._documents = TabularDocuments(documents)

    async def __call__(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        pending: _Pending = {}
        for recorded in events:
            event = recorded.decode()
            if isinstance(event, _COMMITS):
                held = pending.get(event.entity_id)
                follows = held is not None and held[0].metadata_location == event.previous_metadata_location
                replayed = await self._documents.after_commit(
                    conn, event, recorded.document, held[1] if held is not None and follows else None
                )
                # What the row holds: the first pending commit's base (the lists' changes are written against it).
                previous = event.previous_metadata_location
                stored = held[3] if held is not None and follows else _stored(previous, replayed.base)
                pending[event.entity_id] = (event, replayed.document, recorded, stored)
                if len(pending) >= _PENDING_ROWS:
                    await self._write_documents(conn, pending)
                continue
            if pending:
                await self._write_documents(conn, pending)
            if isinstance(
                event, LIFECYCLE_EVENTS
            ):  # soft deletion records when and by whom (projections/catalog/lifecycle.py)
                await project_lifecycle(event, conn, recorded)
            else:
                await _apply(event, conn, recorded.stream_version)
        if pending:
            await self._write_documents(conn, pending)

    async def _write_documents(self, conn: Connection, pending: _Pending) -> None:
        for event, document, recorded, stored in pending.values():
            if isinstance(event, TableCommitted):
                row = (location_key(document["location"]), event.metadata_location, recorded.stream_version)
                encoded = self._kept.encoded(event.metadata_location, document)
                await commit_document(conn, event.entity_id, row, document, encoded, stored)
            else:
                await _set_view_document(conn, event, document, recorded)
        pending.clear()


def _stored(location: str | None, document: Json | None) -> Stored | None:
    return Stored(location, document) if location is not None and document is not None else None


async def project_catalog(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Apply events in order (rebuild, verify, as-of replays): documents are kept for this call's events only."""
    await CatalogProjector(MetadataDocuments(capacity=_PENDING_ROWS * 2))(conn, events)


@singledispatch
async def _apply(event: Event, conn: Connection, version: int) -> None:
    raise TypeError(f"No catalog projection for {type(event).__name__}")


@_apply.register(WarehouseProtectionSet)
@_apply.register(NamespaceProtectionSet)
@_apply.register(TableProtectionSet)
@_apply.register(ViewProtectionSet)
async def _protection_set(event: ProtectionSet, conn: Connection, version: int) -> None:
    """The flag has its own read model (projections/protection.py); here the object's stream moved on."""
    relation = {"warehouse": "warehouses", "namespace": "namespaces", "table": "tables", "view": "views"}[event.entity]
    query = sql.SQL("UPDATE {} SET version = %s WHERE id = %s").format(sql.Identifier(relation))
    await conn.execute(query, (version, event.entity_id))


@_apply.register
async def _(event: ServerBootstrapped, conn: Connection, version: int) -> None:
    await conn.execute(
        "INSERT INTO server_info (id, is_operator) VALUES (%s, %s)", (event.server_id, event.is_operator)
    )


@_apply.register
async def _(event: ProjectCreated, conn: Connection, version: int) -> None:
    await conn.execute(
        "INSERT INTO projects (id, name, version) VALUES (%s, %s, %s)", (event.project_id, event.name, version)
    )


@_apply.register
async def _(event: ProjectRenamed, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE projects SET name = %s, version = %s WHERE id = %s", (event.name, version, event.project_id)
    )


@_apply.register
async def _(event: ProjectDeleted, conn: Connection, version: int) -> None:
    await conn.execute("DELETE FROM projects WHERE id = %s", (event.project_id,))


def _credential(reference: SecretReference | None) -> tuple[uuid.UUID | None, str | None]:
    return (reference.id, reference.fingerprint) if reference else (None, None)


@_apply.register
async def _(event: WarehouseCreated, conn: Connection, version: int) -> None:
    await conn.execute(
        "INSERT INTO warehouses (id, project_id, name, name_key, location, storage_profile, delete_profile,"
        " storage_credential_id, storage_credential_fingerprint, version)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            event.warehouse_id,
            event.project_id,
            event.name,
            name_key(event.name),
            base_location(decode_profile(event.storage_profile)),
            Jsonb(event.storage_profile),
            Jsonb(event.delete_profile or HARD_DELETE),
            *_credential(event.storage_credential),
            version,
        ),
    )


@_apply.register
async def _(event: WarehouseRenamed, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE warehouses SET name = %s, name_key = %s, version = %s WHERE id = %s",
        (event.name, name_key(event.name), version, event.warehouse_id),
    )


@_apply.register(WarehouseActivated)
@_apply.register(WarehouseDeactivated)
async def _set_status(event: WarehouseActivated | WarehouseDeactivated, conn: Connection, version: int) -> None:
    status = "active" if isinstance(event, WarehouseActivated) else "inactive"
    await conn.execute(
        "UPDATE warehouses SET status = %s, version = %s WHERE id = %s", (status, version, event.warehouse_id)
    )


@_apply.register
async def _(event: WarehouseStorageUpdated, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE warehouses SET location = %s, storage_profile = %s, storage_credential_id = %s,"
        " storage_credential_fingerprint = %s, version = %s WHERE id = %s",
        (
            base_location(decode_profile(event.storage_profile)),
            Jsonb(event.storage_profile),
            *_credential(event.storage_credential),
            version,
            event.warehouse_id,
        ),
    )


@_apply.register
async def _(event: WarehouseCredentialUpdated, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE warehouses SET storage_credential_id = %s, storage_credential_fingerprint = %s, version = %s"
        " WHERE id = %s",
        (*_credential(event.storage_credential), version, event.warehouse_id),
    )


@_apply.register
async def _(event: WarehouseDeleteProfileUpdated, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE warehouses SET delete_profile = %s, version = %s WHERE id = %s",
        (Jsonb(event.delete_profile), version, event.warehouse_id),
    )


@_apply.register
async def _(event: WarehouseServerSideRebaseUpdated, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE warehouses SET server_side_rebase = %s, version = %s WHERE id = %s",
        (event.mode, version, event.warehouse_id),
    )


@_apply.register
async def _(event: WarehouseScanPlanningUpdated, conn: Connection, version: int) -> None:
    await conn.execute(
        "UPDATE warehouses SET scan_planning = %s, version = %s WHERE id = %s",
        (event.mode, version, event.warehouse_id),
    )


@_apply.register
async def _(event: WarehouseDeleted, conn: Connection, version: int) -> None:
    await conn.execute("DELETE FROM warehouses WHERE id = %s", (event.warehouse_id,))
    await conn.execute("DELETE FROM deleted_warehouses WHERE id = %s", (event.warehouse_id,))  # a held one expired


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
    return sql.Identifier(kind_of(event).relation)


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
            location_key(event.metadata["location"]),
            event.metadata_location,
            Jsonb(event.metadata if isinstance(event, ViewEvent) else document_head(event.metadata)),
            version,
        ),
    )
    if not isinstance(event, ViewEvent):  # a table's history lists are rows (projections/catalog/document_entries.py)
        await write_entries(conn, event.entity_id, event.metadata)


async def _set_view_document(conn: Connection, event: ViewCommitted, document: Json, recorded: RecordedEvent) -> None:
    """A view's document is its row's whole (it grows only with view versions); a table's, `commit_document`'s."""
    query = "UPDATE views SET location = %s, metadata_location = %s, metadata = %s, version = %s WHERE id = %s"
    location = location_key(document["location"])
    encoded = recorded.encoded_document
    stored = Jsonb(document) if encoded is None else Jsonb(document, dumps=lambda _: encoded)  # encoded once
    params = (location, event.metadata_location, stored, recorded.stream_version, event.entity_id)
    await conn.execute(query.encode(), params)


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
    if isinstance(event, TableDropped):
        await delete_entries(conn, event.entity_id)
