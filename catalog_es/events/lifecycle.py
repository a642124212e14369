"""Soft deletion facts: tables, views and namespaces hidden, brought back, expired; a table's pointer restored."""

from __future__ import annotations

import uuid

from catalog_es.events.base import Event, Json
from catalog_es.events.catalog import NamespaceEvent, TableEvent, ViewEvent, WarehouseEvent


class TableSoftDropped(TableEvent, frozen=True, kw_only=True):
    """Hidden, not gone: metadata and files stay until `expires_at_ms` (then purged if `purge_requested`).

    `namespace_id` and `name` are what it was called, for the audit history and the deleted listing;
    `with_namespace` is the id of the namespace whose recursive drop took it along (None: dropped alone).
    """

    type_name = "io.catalog-es.table.soft-dropped.v1"
    namespace_id: uuid.UUID
    name: str
    expires_at_ms: int
    purge_requested: bool
    with_namespace: uuid.UUID | None = None
    expiration_task_id: uuid.UUID | None = None  # the `tabular_expiration` task (None: its namespace's)


class ViewSoftDropped(ViewEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.view.soft-dropped.v1"
    namespace_id: uuid.UUID
    name: str
    expires_at_ms: int
    purge_requested: bool = False
    with_namespace: uuid.UUID | None = None
    expiration_task_id: uuid.UUID | None = None


class TableUndropped(TableEvent, frozen=True, kw_only=True):
    """Visible again, in its namespace under `name` (a new one when its old name was taken meanwhile)."""

    type_name = "io.catalog-es.table.undropped.v1"
    namespace_id: uuid.UUID
    name: str
    from_name: str


class ViewUndropped(ViewEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.view.undropped.v1"
    namespace_id: uuid.UUID
    name: str
    from_name: str


class TableExpired(TableEvent, frozen=True, kw_only=True):
    """A soft-dropped table's hold ran out: gone for good (its files are purged after if `purge_requested`)."""

    type_name = "io.catalog-es.table.expired.v1"
    purge_requested: bool


class ViewExpired(ViewEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.view.expired.v1"


class TableRestored(TableEvent, frozen=True, kw_only=True):
    """The table's pointer set back to a metadata file of its own history; the metadata is recorded whole."""

    type_name = "io.catalog-es.table.restored.v1"
    previous_metadata_location: str
    metadata_location: str
    metadata: Json


class NamespaceSoftDropped(NamespaceEvent, frozen=True, kw_only=True):
    """A namespace hidden with everything inside (its tabulars and children have their own events first)."""

    type_name = "io.catalog-es.namespace.soft-dropped.v1"
    namespace: list[str]
    expires_at_ms: int
    with_namespace: uuid.UUID | None = None  # the root of the recursive drop, when this is a child
    expiration_task_id: uuid.UUID | None = None  # the root's task expires the whole subtree


class NamespaceUndropped(NamespaceEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.namespace.undropped.v1"
    namespace: list[str]


class NamespaceExpired(NamespaceEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.namespace.expired.v1"


class WarehouseSoftDeleted(WarehouseEvent, frozen=True, kw_only=True):
    """A forced warehouse deletion held back: the warehouse and everything in it are hidden until
    `expires_at_ms` (its `tabular_expiration` task then deletes it for good); its name is free meanwhile."""

    type_name = "io.catalog-es.warehouse.soft-deleted.v1"
    name: str
    expires_at_ms: int
    expiration_task_id: uuid.UUID | None = None


class WarehouseUndeleted(WarehouseEvent, frozen=True, kw_only=True):
    """A held warehouse back, with all its contents, under `name`."""

    type_name = "io.catalog-es.warehouse.undeleted.v1"
    name: str


LIFECYCLE_EVENTS: tuple[type[Event], ...] = (
    TableSoftDropped,
    ViewSoftDropped,
    TableUndropped,
    ViewUndropped,
    TableExpired,
    ViewExpired,
    TableRestored,
    NamespaceSoftDropped,
    NamespaceUndropped,
    NamespaceExpired,
    WarehouseSoftDeleted,
    WarehouseUndeleted,
)
