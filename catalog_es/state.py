"""What command handlers read before deciding: read-model rows and the port that serves them."""

from __future__ import annotations

import uuid
from typing import Protocol

import msgspec

from catalog_es.database import Connection
from catalog_es.events import Json
from catalog_es.identifiers import Namespace


class WarehouseRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    location: str
    storage_profile: Json


class NamespaceRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    warehouse_id: uuid.UUID
    parts: list[str]
    properties: dict[str, str]
    version: int

    @property
    def namespace(self) -> Namespace:
        return Namespace(tuple(self.parts))


class TableRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace_id: uuid.UUID
    namespace: list[str]
    name: str
    location: str
    metadata_location: str
    metadata: Json
    version: int


class ViewRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace_id: uuid.UUID
    namespace: list[str]
    name: str
    location: str
    metadata_location: str
    metadata: Json
    version: int


class CatalogState(Protocol):
    """Strongly consistent reads (the inline read models), on a given connection."""

    async def project_exists(self, conn: Connection, project_id: uuid.UUID) -> bool: ...

    async def warehouse_by_name(self, conn: Connection, project_id: uuid.UUID, name: str) -> WarehouseRow | None: ...

    async def warehouse_by_id(self, conn: Connection, warehouse_id: uuid.UUID) -> WarehouseRow | None: ...

    async def namespace(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace
    ) -> NamespaceRow | None: ...

    async def namespace_is_empty(self, conn: Connection, row: NamespaceRow) -> bool: ...

    async def table(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TableRow | None: ...

    async def table_id_taken(self, conn: Connection, table_id: uuid.UUID) -> bool: ...

    async def table_name_taken(self, conn: Connection, namespace_id: uuid.UUID, name: str) -> bool:
        """Whether a table *or a view* holds the name: they share one name space per namespace."""
        ...

    async def view(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> ViewRow | None: ...

    async def view_id_taken(self, conn: Connection, view_id: uuid.UUID) -> bool: ...

    async def location_taken(
        self, conn: Connection, warehouse_id: uuid.UUID, location: str, except_table: uuid.UUID | None = None
    ) -> bool: ...
