"""Namespace use cases: create, update properties, drop."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import (
    AlreadyExistsError,
    BadRequestError,
    NamespaceDepthExceededError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    UnprocessableEntityError,
)
from catalog_es.events import NamespaceCreated, NamespaceDropped, NamespacePropertiesUpdated
from catalog_es.identifiers import Namespace, validate_name
from catalog_es.locations import as_written, require_inside_warehouse
from catalog_es.storage.layout import namespace_location
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.protection import require_unprotected_namespace
from commands.soft_delete import drop_namespace_tree


class CreateNamespace(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    properties: dict[str, str]
    metadata: EventMetadata
    max_depth: int | None = None  # None: no limit


class UpdateNamespaceProperties(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    updates: dict[str, str]
    removals: list[str]
    metadata: EventMetadata


class PropertiesUpdateSummary(msgspec.Struct, frozen=True):
    updated: list[str]
    removed: list[str]
    missing: list[str]


class DropNamespace(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    metadata: EventMetadata
    force: bool = False  # overrides protection of the namespace and of anything below it
    recursive: bool = False  # with everything inside (commands/soft_delete.py: hidden on a soft warehouse)
    purge_requested: bool = False  # a recursive soft drop: purge its tables' files when they expire


def _validate(namespace: Namespace) -> None:
    if not namespace.parts:
        raise BadRequestError("Namespace must have at least one level")
    try:
        for part in namespace.parts:
            validate_name(part, "namespace")
    except ValueError as exc:
        raise BadRequestError(str(exc)) from None


async def handle_create_namespace(cmd: CreateNamespace, ctx: CommandContext) -> dict[str, str]:
    """Create a namespace below an existing parent; returns its stored properties.

    Raises:
        BadRequestError: invalid name or location.
        NamespaceDepthExceededError: more levels than `max_depth`.
        NoSuchNamespaceError: the parent does not exist.
        AlreadyExistsError: the namespace exists (in any case).
    """
    _validate(cmd.namespace)
    if cmd.max_depth is not None and len(cmd.namespace.parts) > cmd.max_depth:
        raise NamespaceDepthExceededError(f"Namespace exceeds maximum depth of {cmd.max_depth}")  # Lakekeeper's text
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    namespace_id = ctx.ids.new_id()
    properties = dict(cmd.properties)
    if "location" in properties:
        properties["location"] = as_written(properties["location"])  # as the client spelled it, checked canonically
        require_inside_warehouse(properties["location"], warehouse.location, warehouse.alternative_schemes)
    async with ctx.store.transaction(cmd.metadata) as tx:
        if await ctx.state.namespace(tx.conn, cmd.warehouse_id, cmd.namespace) is not None:
            raise AlreadyExistsError(f"Namespace already exists: {cmd.namespace}")
        parent = cmd.namespace.parent
        parent_row = await ctx.state.namespace(tx.conn, cmd.warehouse_id, parent) if parent is not None else None
        if parent is not None and parent_row is None:
            raise NoSuchNamespaceError(f"Parent namespace does not exist: {parent}")
        if "location" not in properties:
            properties["location"] = namespace_location(
                warehouse.storage_profile.get("storage-layout"),
                warehouse.location,
                parent_row.properties.get("location") if parent_row is not None else None,
                cmd.namespace.parts[-1],
                namespace_id,
            )
        event = NamespaceCreated(
            namespace_id=namespace_id,
            warehouse_id=cmd.warehouse_id,
            namespace=list(cmd.namespace.parts),
            properties=properties,
        )
        await tx.append(event, expected_version=0)
    return properties


async def handle_update_namespace_properties(
    cmd: UpdateNamespaceProperties, ctx: CommandContext
) -> PropertiesUpdateSummary:
    """Set and remove properties; reports what was updated, removed and missing.

    Raises:
        UnprocessableEntityError: a key is both set and removed.
        InvalidLocationError: a new `location` outside the warehouse.
        NoSuchNamespaceError: the namespace does not exist.
    """
    both = set(cmd.updates) & set(cmd.removals)
    if both:
        raise UnprocessableEntityError(f"Properties are both updated and removed: {sorted(both)}")
    updates = dict(cmd.updates)
    if "location" in updates:
        warehouse = await ctx.warehouse(cmd.warehouse_id)
        updates["location"] = as_written(updates["location"])
        require_inside_warehouse(updates["location"], warehouse.location, warehouse.alternative_schemes)
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        removed = sorted(key for key in set(cmd.removals) if key in row.properties)
        missing = sorted(key for key in set(cmd.removals) if key not in row.properties)
        event = NamespacePropertiesUpdated(
            namespace_id=row.id, warehouse_id=row.warehouse_id, updated=updates, removed=removed
        )
        await tx.append(event, expected_version=row.version)
    return PropertiesUpdateSummary(updated=sorted(cmd.updates), removed=removed, missing=missing)


async def handle_drop_namespace(cmd: DropNamespace, ctx: CommandContext) -> None:
    """Drop an empty namespace, or with `recursive` everything inside it too.

    A namespace still holding soft-dropped tables or views is not empty: they would lose their namespace.

    Raises:
        NoSuchNamespaceError: it does not exist.
        NamespaceNotEmptyError: it still holds tables (also soft-dropped ones) or child namespaces.
        ProtectedError: it (or anything below it) is protected and the drop is not forced.
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id) if cmd.recursive else None
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        await require_unprotected_namespace(ctx, tx.conn, cmd.warehouse_id, cmd.namespace, force=cmd.force)
        if ctx.soft_deletes is not None and await ctx.soft_deletes.hidden_in(
            tx.conn, cmd.warehouse_id, row.namespace.key
        ):
            raise NamespaceNotEmptyError(
                f"Namespace {cmd.namespace} holds soft-dropped tables or views: undrop them or let them expire"
            )
        if cmd.recursive and warehouse is not None:
            await drop_namespace_tree(tx, ctx, warehouse, row, purge=cmd.purge_requested)
            return
        if not await ctx.state.namespace_is_empty(tx.conn, row):
            raise NamespaceNotEmptyError(f"Namespace is not empty: {cmd.namespace}")
        event = NamespaceDropped(namespace_id=row.id, warehouse_id=row.warehouse_id)
        await tx.append(event, expected_version=row.version)
