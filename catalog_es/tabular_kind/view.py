"""The view kind: its events, its not-found error, its lookups; it claims no location and is never purged."""

from __future__ import annotations

import uuid

from catalog_es.errors import NoSuchViewError
from catalog_es.events import Event, Json, ViewDropped, ViewRegistered, ViewRenamed
from catalog_es.events.lifecycle import ViewExpired, ViewSoftDropped, ViewUndropped
from catalog_es.events.protection import ViewProtectionSet
from catalog_es.identifiers import Namespace
from catalog_es.metadata.views import parse_view_metadata
from catalog_es.state import CatalogState, TabularRow
from catalog_es.store.database import Connection
from catalog_es.tabular_kind.base import Adopted, SoftDrop, TabularKind


class ViewKind(TabularKind):
    name = "view"
    relation = "views"
    missing_error = NoSuchViewError
    claims_location = False
    purgeable = False

    def _adopt(self, document: Json) -> Adopted:
        metadata = parse_view_metadata(document)
        return Adopted(uuid.UUID(metadata.view_uuid), metadata.location)

    async def row(
        self, state: CatalogState, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        return await state.view(conn, warehouse_id, namespace, name)

    async def id_taken(self, state: CatalogState, conn: Connection, tabular_id: uuid.UUID) -> bool:
        return await state.view_id_taken(conn, tabular_id)

    def registered(
        self,
        tabular_id: uuid.UUID,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        metadata_location: str,
        metadata: Json,
    ) -> Event:
        return ViewRegistered(
            view_id=tabular_id,
            warehouse_id=warehouse_id,
            namespace_id=namespace_id,
            name=name,
            metadata_location=metadata_location,
            metadata=metadata,
        )

    def renamed(self, row: TabularRow, namespace_id: uuid.UUID, name: str) -> Event:
        return ViewRenamed(
            view_id=row.id,
            warehouse_id=row.warehouse_id,
            from_namespace_id=row.namespace_id,
            from_name=row.name,
            namespace_id=namespace_id,
            name=name,
        )

    def dropped(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return ViewDropped(view_id=tabular_id, warehouse_id=warehouse_id)

    def soft_dropped(self, drop: SoftDrop) -> Event:
        return ViewSoftDropped(
            view_id=drop.tabular_id,
            warehouse_id=drop.warehouse_id,
            namespace_id=drop.namespace_id,
            name=drop.name,
            expires_at_ms=drop.expires_at_ms,
            with_namespace=drop.with_namespace,
            expiration_task_id=drop.expiration_task_id,
        )

    def undropped(
        self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, namespace_id: uuid.UUID, name: str, from_name: str
    ) -> Event:
        return ViewUndropped(
            view_id=tabular_id, warehouse_id=warehouse_id, namespace_id=namespace_id, name=name, from_name=from_name
        )

    def expired(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return ViewExpired(view_id=tabular_id, warehouse_id=warehouse_id)

    def protection_set(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, protected: bool) -> Event:
        return ViewProtectionSet(view_id=tabular_id, warehouse_id=warehouse_id, protected=protected)
