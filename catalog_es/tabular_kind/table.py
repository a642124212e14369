"""The table kind: its events, its not-found error, its lookups; it claims its location and can be purged."""

from __future__ import annotations

import uuid

from catalog_es.errors import NoSuchTableError
from catalog_es.events import Event, Json, TableDropped, TableRegistered, TableRenamed
from catalog_es.events.lifecycle import TableExpired, TableSoftDropped, TableUndropped
from catalog_es.events.protection import TableProtectionSet
from catalog_es.identifiers import Namespace
from catalog_es.metadata.tables import parse_metadata
from catalog_es.state import CatalogState, TabularRow
from catalog_es.store.database import Connection
from catalog_es.tabular_kind.base import Adopted, SoftDrop, TabularKind


class TableKind(TabularKind):
    name = "table"
    relation = "tables"
    missing_error = NoSuchTableError
    claims_location = True
    purgeable = True

    def _adopt(self, document: Json) -> Adopted:
        metadata = parse_metadata(document)
        return Adopted(metadata.table_uuid, metadata.location)

    async def row(
        self, state: CatalogState, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        return await state.table(conn, warehouse_id, namespace, name)

    async def id_taken(self, state: CatalogState, conn: Connection, tabular_id: uuid.UUID) -> bool:
        return await state.table_id_taken(conn, tabular_id)

    def registered(
        self,
        tabular_id: uuid.UUID,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        metadata_location: str,
        metadata: Json,
    ) -> Event:
        return TableRegistered(
            table_id=tabular_id,
            warehouse_id=warehouse_id,
            namespace_id=namespace_id,
            name=name,
            metadata_location=metadata_location,
            metadata=metadata,
        )

    def renamed(self, row: TabularRow, namespace_id: uuid.UUID, name: str) -> Event:
        return TableRenamed(
            table_id=row.id,
            warehouse_id=row.warehouse_id,
            from_namespace_id=row.namespace_id,
            from_name=row.name,
            namespace_id=namespace_id,
            name=name,
        )

    def dropped(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return TableDropped(table_id=tabular_id, warehouse_id=warehouse_id, purge_requested=purge)

    def soft_dropped(self, drop: SoftDrop) -> Event:
        return TableSoftDropped(
            table_id=drop.tabular_id,
            warehouse_id=drop.warehouse_id,
            namespace_id=drop.namespace_id,
            name=drop.name,
            expires_at_ms=drop.expires_at_ms,
            purge_requested=drop.purge_requested,
            with_namespace=drop.with_namespace,
            expiration_task_id=drop.expiration_task_id,
        )

    def undropped(
        self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, namespace_id: uuid.UUID, name: str, from_name: str
    ) -> Event:
        return TableUndropped(
            table_id=tabular_id, warehouse_id=warehouse_id, namespace_id=namespace_id, name=name, from_name=from_name
        )

    def expired(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return TableExpired(table_id=tabular_id, warehouse_id=warehouse_id, purge_requested=purge)

    def protection_set(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, protected: bool) -> Event:
        return TableProtectionSet(table_id=tabular_id, warehouse_id=warehouse_id, protected=protected)
