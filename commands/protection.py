"""Protection use cases: set or clear an object's flag, and the check every drop makes before it appends."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import (
    CatalogError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchWarehouseError,
    ProtectedError,
)
from catalog_es.events import Event
from catalog_es.events.protection import NamespaceProtectionSet, WarehouseProtectionSet
from catalog_es.identifiers import Namespace
from catalog_es.protection import ProtectableKind, ProtectedObject, Protection
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from catalog_es.tabular_kind import kind_named
from commands.context import CommandContext

FORCE_HINT = "unprotect it first, or drop with force=true (needs modify on the warehouse)"

_MISSING: dict[ProtectableKind, type[CatalogError]] = {
    "warehouse": NoSuchWarehouseError,
    "namespace": NoSuchNamespaceError,
    "table": NoSuchTableError,
    "view": NoSuchViewError,
}


class SetProtection(msgspec.Struct, frozen=True):
    kind: ProtectableKind
    warehouse_id: uuid.UUID
    object_id: uuid.UUID  # the warehouse's own id for kind `warehouse`
    protected: bool
    metadata: EventMetadata


def _event(cmd: SetProtection, project_id: uuid.UUID) -> Event:
    warehouse_id, protected = cmd.warehouse_id, cmd.protected
    if cmd.kind == "warehouse":
        return WarehouseProtectionSet(warehouse_id=warehouse_id, project_id=project_id, protected=protected)
    if cmd.kind == "namespace":
        return NamespaceProtectionSet(namespace_id=cmd.object_id, warehouse_id=warehouse_id, protected=protected)
    return kind_named(cmd.kind).protection_set(cmd.object_id, warehouse_id, protected=protected)


async def handle_set_protection(cmd: SetProtection, ctx: CommandContext) -> Protection:
    """Record the flag on the object's own stream (setting it to what it is records it again, with a new time,
    as Lakekeeper answers a new `updated_at`); returns the flag as stored.

    Raises:
        NoSuchWarehouseError, NoSuchNamespaceError, NoSuchTableError, NoSuchViewError: no live object of that
            kind with that id in the warehouse.
    """
    async with ctx.store.transaction(cmd.metadata) as tx:
        version = await ctx.protections.current_version(tx.conn, cmd.kind, cmd.warehouse_id, cmd.object_id)
        if version is None:
            raise _MISSING[cmd.kind](f"{cmd.kind.capitalize()} {cmd.object_id} does not exist")
        warehouse = await ctx.state.warehouse_by_id(tx.conn, cmd.warehouse_id)
        if warehouse is None:
            raise NoSuchWarehouseError(f"Warehouse {cmd.warehouse_id} does not exist")
        await tx.append(_event(cmd, warehouse.project_id), expected_version=version)
    async with ctx.store.connection() as conn:  # projected inline when the transaction committed
        return await ctx.protections.protection(conn, cmd.object_id)


async def require_unprotected_tabular(
    ctx: CommandContext, conn: Connection, kind: str, tabular_id: uuid.UUID, label: str, *, force: bool
) -> None:
    """Raises: ProtectedError when the table or view is protected and the drop is not forced."""
    if not force and (await ctx.protections.protection(conn, tabular_id)).protected:
        raise ProtectedError(f"{kind.capitalize()} {label} is protected from being dropped: {FORCE_HINT}")


async def require_unprotected_namespace(
    ctx: CommandContext, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, *, force: bool
) -> None:
    """The namespace and everything below it (a recursive drop takes them all).

    Raises: ProtectedError unless forced.
    """
    if force:
        return
    found = await ctx.protections.protected_inside(conn, warehouse_id, namespace)
    if found:
        raise ProtectedError(f"Namespace {namespace} cannot be dropped: {_listed(found)} protected; {FORCE_HINT}")


async def require_unprotected_warehouse(
    ctx: CommandContext, conn: Connection, warehouse_id: uuid.UUID, name: str, *, force: bool
) -> None:
    """Raises: ProtectedError when the warehouse is protected and the delete is not forced.

    Without force a warehouse must be empty, so nothing inside it can be protected; with force, protection
    of the warehouse and of everything inside is overridden (Lakekeeper's `force`).
    """
    if not force and (await ctx.protections.protection(conn, warehouse_id)).protected:
        raise ProtectedError(f"Warehouse {name!r} is protected from being deleted: {FORCE_HINT}")


def _listed(found: list[ProtectedObject]) -> str:
    names = ", ".join(f"{item.kind} {item.name}" for item in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    verb = "is" if len(found) == 1 else "are"
    return f"{names}{more} {verb}"
