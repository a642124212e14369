"""What soft deletion reads before deciding: hidden tables, views and namespaces, and the port that serves them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Protocol

import msgspec

from catalog_es.events import Json
from catalog_es.state import TabularKindName, TabularRow
from catalog_es.store.database import Connection


class DeletedTabularRow(msgspec.Struct, frozen=True):
    """A soft-dropped table or view: where it was, its last metadata, and when and by whom it was hidden."""

    id: uuid.UUID
    kind: TabularKindName
    warehouse_id: uuid.UUID
    namespace_id: uuid.UUID
    namespace: list[str]
    name: str
    location: str
    metadata_location: str
    metadata: Json
    version: int
    deleted_at: datetime
    expires_at: datetime
    purge_requested: bool
    actor: str | None
    with_namespace: uuid.UUID | None
    expiration_task_id: uuid.UUID | None
    created_at: datetime | None = None


class DeletedNamespaceRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    warehouse_id: uuid.UUID
    parts: list[str]
    version: int
    deleted_at: datetime
    expires_at: datetime
    actor: str | None
    with_namespace: uuid.UUID | None
    expiration_task_id: uuid.UUID | None


class DeletedWarehouseRow(msgspec.Struct, frozen=True):
    """A warehouse deleted with `force` and held back: as it was, and when the hold runs out."""

    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    location: str
    credential_id: uuid.UUID | None
    version: int
    deleted_at: datetime
    expires_at: datetime
    actor: str | None
    expiration_task_id: uuid.UUID | None


class Member(msgspec.Struct, frozen=True):
    """One object of a namespace tree: its id and stream version, where it is and what it is called."""

    id: uuid.UUID
    version: int
    namespace_id: uuid.UUID  # a namespace's own id
    name: str
    parts: list[str]  # the namespace's, for a namespace


class Subtree(msgspec.Struct, frozen=True):
    """What a recursive drop takes along: tables, views, namespaces deepest first (the root last)."""

    tables: list[Member]
    views: list[Member]
    namespaces: list[Member]


class SoftDeleteState(Protocol):
    """Strongly consistent reads of the hidden objects (inline read model), on a given connection."""

    async def deleted_tabular(
        self, conn: Connection, warehouse_id: uuid.UUID, tabular_id: uuid.UUID
    ) -> DeletedTabularRow | None: ...

    async def deleted_namespace(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace_id: uuid.UUID
    ) -> DeletedNamespaceRow | None: ...

    async def deleted_with(
        self, conn: Connection, root_id: uuid.UUID
    ) -> tuple[list[DeletedTabularRow], list[DeletedNamespaceRow]]:
        """What the recursive drop of `root_id` hid (the root included), namespaces shallowest first."""
        ...

    async def live_subtree(self, conn: Connection, warehouse_id: uuid.UUID, key: str) -> Subtree:
        """The namespace with key `key`, its descendants and every live table and view in them."""
        ...

    async def hidden_in(self, conn: Connection, warehouse_id: uuid.UUID, key: str) -> list[DeletedTabularRow]:
        """Soft-dropped tabulars in the namespace with key `key` or below it."""
        ...

    async def live_table(self, conn: Connection, warehouse_id: uuid.UUID, table_id: uuid.UUID) -> TabularRow | None:
        """A live table by its id (a restore addresses it so, as Lakekeeper's management routes do)."""
        ...

    async def recorded_metadata(self, conn: Connection, table_id: uuid.UUID, metadata_location: str) -> Json | None:
        """The metadata a table of this id had at `metadata_location`, as its events recorded it; None when the
        location was never this table's."""
        ...

    async def deleted_warehouse(self, conn: Connection, warehouse_id: uuid.UUID) -> DeletedWarehouseRow | None: ...

    async def hidden_in_warehouse(
        self, conn: Connection, warehouse_id: uuid.UUID
    ) -> tuple[list[DeletedTabularRow], list[DeletedNamespaceRow]]:
        """Every soft-dropped tabular and namespace of the warehouse, namespaces deepest first."""
        ...

    async def held_warehouse_locations(self, conn: Connection) -> list[str]: ...
