"""Protection facts: a warehouse, namespace, table or view was marked (or unmarked) as not to be dropped.

Each is appended to the object's own stream, so setting protection and dropping the object are serialised by
the stream's version: a drop that read the object unprotected fails its version check if protection won.
"""

from __future__ import annotations

from catalog_es.events.base import Event
from catalog_es.events.catalog import NamespaceEvent, TableEvent, ViewEvent, WarehouseEvent


class WarehouseProtectionSet(WarehouseEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.warehouse.protection-set.v1"
    protected: bool


class NamespaceProtectionSet(NamespaceEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.namespace.protection-set.v1"
    protected: bool


class TableProtectionSet(TableEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.table.protection-set.v1"
    protected: bool


class ViewProtectionSet(ViewEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.view.protection-set.v1"
    protected: bool


ProtectionSet = WarehouseProtectionSet | NamespaceProtectionSet | TableProtectionSet | ViewProtectionSet

PROTECTION_EVENTS: tuple[type[Event], ...] = (
    WarehouseProtectionSet,
    NamespaceProtectionSet,
    TableProtectionSet,
    ViewProtectionSet,
)
