"""Warehouse use cases: create, rename, (de)activate, storage and credential updates, delete profile, rebase and
scan-planning modes, delete."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchWarehouseError, NotEmptyError
from catalog_es.events import (
    NamespaceDropped,
    SecretReference,
    TableDropped,
    ViewDropped,
    WarehouseActivated,
    WarehouseCreated,
    WarehouseCredentialUpdated,
    WarehouseDeactivated,
    WarehouseDeleted,
    WarehouseDeleteProfileUpdated,
    WarehouseEvent,
    WarehouseRenamed,
    WarehouseScanPlanningUpdated,
    WarehouseServerSideRebaseUpdated,
    WarehouseStorageUpdated,
)
from catalog_es.identifiers import name_key
from catalog_es.metadata.rebase import RebaseMode
from catalog_es.planning.mode import ScanPlanningMode
from catalog_es.state import WarehouseRow
from catalog_es.storage.backends import validate_access
from catalog_es.storage.delete_profiles import decode_delete_profile
from catalog_es.storage.file_roots import storage_overlaps
from catalog_es.storage.profiles import (
    FileProfile,
    StorageCredential,
    StorageProfile,
    base_location,
    check_profile_update,
    decode_credential,
    decode_profile,
    encode_credential,
    encode_profile,
    system_identity_of,
)
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata, Transaction
from commands.context import CommandContext, off_loop
from commands.projects import existing_project, validate_display_name
from commands.protection import require_unprotected_warehouse
from commands.warehouse_hold import hold_warehouse

Json = dict[str, object]


class CreateWarehouse(msgspec.Struct, frozen=True, kw_only=True):
    project_id: uuid.UUID
    name: str
    storage_profile: Json
    metadata: EventMetadata
    storage_credential: Json | None = None
    delete_profile: Json | None = None


class RenameWarehouse(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    name: str
    metadata: EventMetadata


class SetWarehouseActive(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    active: bool
    metadata: EventMetadata


class UpdateStorage(msgspec.Struct, frozen=True, kw_only=True):
    """A new profile; with no credential the current one stays in force."""

    warehouse_id: uuid.UUID
    storage_profile: Json
    metadata: EventMetadata
    storage_credential: Json | None = None


class UpdateCredential(msgspec.Struct, frozen=True, kw_only=True):
    """Replace the credential; None removes it (the storage must then be reachable without one)."""

    warehouse_id: uuid.UUID
    metadata: EventMetadata
    storage_credential: Json | None = None


class UpdateDeleteProfile(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    delete_profile: Json
    metadata: EventMetadata


class UpdateServerSideRebase(msgspec.Struct, frozen=True):
    """The warehouse's own rebase mode; None falls back to the server's `server_side_rebase`."""

    warehouse_id: uuid.UUID
    mode: RebaseMode | None
    metadata: EventMetadata


class UpdateScanPlanning(msgspec.Struct, frozen=True):
    """The warehouse's own scan-planning mode; None falls back to the server's `scan_planning.mode`."""

    warehouse_id: uuid.UUID
    mode: ScanPlanningMode | None
    metadata: EventMetadata


class DeleteWarehouse(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    metadata: EventMetadata
    force: bool = False


def _credential(document: Json | None, ctx: CommandContext) -> StorageCredential | None:
    """Raises: BadRequestError for an invalid credential or a system identity the operator has not enabled."""
    ctx.endpoints.check_system_identity(system_identity_of(document))
    return None if document is None else decode_credential(document)


async def _existing(tx: Transaction, ctx: CommandContext, warehouse_id: uuid.UUID) -> WarehouseRow:
    row = await ctx.state.warehouse_by_id(tx.conn, warehouse_id)
    if row is None:
        raise NoSuchWarehouseError(f"Warehouse {warehouse_id} does not exist")
    return row


async def _require_unique_name(tx: Transaction, ctx: CommandContext, project_id: uuid.UUID, name: str) -> None:
    existing = await ctx.state.warehouse_by_name(tx.conn, project_id, name)
    if existing is not None:
        raise AlreadyExistsError(f"A warehouse named {existing.name!r} exists in project {project_id}")


async def _require_exclusive_location(
    conn: Connection, ctx: CommandContext, location: str, except_id: uuid.UUID | None = None
) -> None:
    """Across the whole server: a warehouse of another project is as much in the way as one of this project.

    The message names no other project's warehouse (it may not be the caller's to see).
    """
    others = [row.location for row in await ctx.state.all_warehouses(conn) if row.id != except_id]
    if ctx.soft_deletes is not None:  # a warehouse held after a forced deletion keeps its location
        others += await ctx.soft_deletes.held_warehouse_locations(conn)
    if await off_loop(_any_overlap, location, others):
        raise BadRequestError(f"Storage location {location} overlaps the location of another warehouse")


def _any_overlap(location: str, others: list[str]) -> bool:
    return any(storage_overlaps(other, location) for other in others)


async def _require_allowed_storage(ctx: CommandContext, profile: StorageProfile) -> None:
    """File storage only below the operator's roots; checked before the access probe writes anything."""
    if isinstance(profile, FileProfile):
        await off_loop(ctx.file_roots.check, profile.location)


async def _store_secret(
    tx: Transaction, ctx: CommandContext, credential: StorageCredential | None
) -> SecretReference | None:
    if credential is None:
        return None
    stored = await ctx.secret_store().put(tx.conn, encode_credential(credential))
    return SecretReference(stored.id, stored.fingerprint)


async def _forget_secret(tx: Transaction, ctx: CommandContext, reference: SecretReference | None) -> None:
    if reference is not None:
        await ctx.secret_store().delete(tx.conn, reference.id)


async def handle_create_warehouse(cmd: CreateWarehouse, ctx: CommandContext) -> uuid.UUID:
    """Validate the profile and access to the storage for real, then record the warehouse.

    Raises: BadRequestError (bad profile, name or overlapping location, file storage outside the roots,
    storage not accessible), NoSuchProjectError, AlreadyExistsError.
    """
    name = validate_display_name(cmd.name, "Warehouse")
    profile, credential = decode_profile(cmd.storage_profile), _credential(cmd.storage_credential, ctx)
    delete_profile = decode_delete_profile(cmd.delete_profile)
    await _require_allowed_storage(ctx, profile)
    async with ctx.store.connection() as conn:  # before the probe writes into someone else's warehouse
        await _require_exclusive_location(conn, ctx, base_location(profile))
    await off_loop(validate_access, profile, credential, ctx.endpoints)
    warehouse_id = ctx.ids.new_id()
    async with ctx.store.transaction(cmd.metadata) as tx:
        await existing_project(tx, ctx, cmd.project_id)
        await _require_unique_name(tx, ctx, cmd.project_id, name)
        await _require_exclusive_location(tx.conn, ctx, base_location(profile))
        event = WarehouseCreated(
            warehouse_id=warehouse_id,
            project_id=cmd.project_id,
            name=name,
            storage_profile=encode_profile(profile),
            storage_credential=await _store_secret(tx, ctx, credential),
            delete_profile=delete_profile,
        )
        await tx.append(event, expected_version=0)
    return warehouse_id


async def handle_rename_warehouse(cmd: RenameWarehouse, ctx: CommandContext) -> None:
    name = validate_display_name(cmd.name, "Warehouse")
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        if name_key(name) != name_key(row.name):
            await _require_unique_name(tx, ctx, row.project_id, name)
        await _append(tx, row, WarehouseRenamed(warehouse_id=row.id, project_id=row.project_id, name=name))


async def handle_set_warehouse_active(cmd: SetWarehouseActive, ctx: CommandContext) -> None:
    """Activating an active (or deactivating an inactive) warehouse records nothing."""
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        if (row.status == "active") == cmd.active:
            return
        kind = WarehouseActivated if cmd.active else WarehouseDeactivated
        await _append(tx, row, kind(warehouse_id=row.id, project_id=row.project_id))


async def handle_update_storage(cmd: UpdateStorage, ctx: CommandContext) -> None:
    """Raises: BadRequestError for a change of an immutable field or storage the catalog cannot reach."""
    async with ctx.store.connection() as conn:
        current = await ctx.state.warehouse_by_id(conn, cmd.warehouse_id)
    if current is None:
        raise NoSuchWarehouseError(f"Warehouse {cmd.warehouse_id} does not exist")
    profile = decode_profile(cmd.storage_profile)
    check_profile_update(decode_profile(current.storage_profile), profile)
    await _require_allowed_storage(ctx, profile)
    new_credential = _credential(cmd.storage_credential, ctx)
    credential = new_credential if cmd.storage_credential is not None else await ctx.credential(current)
    await off_loop(validate_access, profile, credential, ctx.endpoints)
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        await _require_exclusive_location(tx.conn, ctx, base_location(profile), except_id=row.id)
        reference = row.storage_credential
        if new_credential is not None:
            await _forget_secret(tx, ctx, reference)
            reference = await _store_secret(tx, ctx, new_credential)
        event = WarehouseStorageUpdated(
            warehouse_id=row.id,
            project_id=row.project_id,
            storage_profile=encode_profile(profile),
            storage_credential=reference,
        )
        await _append(tx, row, event)


async def handle_update_credential(cmd: UpdateCredential, ctx: CommandContext) -> None:
    """Raises: BadRequestError when the storage cannot be reached with the new credential."""
    async with ctx.store.connection() as conn:
        current = await ctx.state.warehouse_by_id(conn, cmd.warehouse_id)
    if current is None:
        raise NoSuchWarehouseError(f"Warehouse {cmd.warehouse_id} does not exist")
    credential = _credential(cmd.storage_credential, ctx)
    await off_loop(validate_access, decode_profile(current.storage_profile), credential, ctx.endpoints)
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        await _forget_secret(tx, ctx, row.storage_credential)
        reference = await _store_secret(tx, ctx, credential)
        await _append(
            tx,
            row,
            WarehouseCredentialUpdated(warehouse_id=row.id, project_id=row.project_id, storage_credential=reference),
        )


async def handle_update_delete_profile(cmd: UpdateDeleteProfile, ctx: CommandContext) -> None:
    delete_profile = decode_delete_profile(cmd.delete_profile)
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        event = WarehouseDeleteProfileUpdated(
            warehouse_id=row.id, project_id=row.project_id, delete_profile=delete_profile
        )
        await _append(tx, row, event)


async def handle_update_server_side_rebase(cmd: UpdateServerSideRebase, ctx: CommandContext) -> None:
    """Recorded even when the mode is unchanged, as a delete profile is: the audit shows who set it, and when.

    In force for the next commit (the warehouse cache drops the row with the event): see `commands.commit_table`.
    """
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        event = WarehouseServerSideRebaseUpdated(warehouse_id=row.id, project_id=row.project_id, mode=cmd.mode)
        await _append(tx, row, event)


async def handle_update_scan_planning(cmd: UpdateScanPlanning, ctx: CommandContext) -> None:
    """Recorded even when the mode is unchanged, as the rebase mode is: the audit shows who set it, and when.

    In force for the next /config and loadTable (the warehouse cache drops the row with the event).
    """
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        event = WarehouseScanPlanningUpdated(warehouse_id=row.id, project_id=row.project_id, mode=cmd.mode)
        await _append(tx, row, event)


async def handle_delete_warehouse(cmd: DeleteWarehouse, ctx: CommandContext) -> None:
    """Refused while the warehouse holds namespaces, tables or views, unless forced.

    Forced: every table, view and namespace is dropped by its own event first (files are kept),
    so consumers and projections see each of them go; with a hold (`CommandContext.warehouse_hold_seconds`) all
    that happens only when the hold runs out, and until then the warehouse can be undeleted
    (commands/warehouse_hold.py).
    Raises: NotEmptyError; ProtectedError when the warehouse is protected and the delete is not forced.
    """
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await _existing(tx, ctx, cmd.warehouse_id)
        await require_unprotected_warehouse(ctx, tx.conn, row.id, row.name, force=cmd.force)
        contents = await ctx.state.warehouse_contents(tx.conn, row.id)
        if not contents.empty and not cmd.force:
            raise NotEmptyError(f"Warehouse {row.name!r} still has namespaces or tables; drop them or pass force=true")
        if cmd.force and ctx.warehouse_hold_seconds > 0:  # held back: undeletable until the hold runs out
            await hold_warehouse(tx, ctx, row)
            return
        for table_id, version in contents.tables:
            await tx.append(
                TableDropped(table_id=table_id, warehouse_id=row.id, purge_requested=False), expected_version=version
            )
        for view_id, version in contents.views:
            await tx.append(ViewDropped(view_id=view_id, warehouse_id=row.id), expected_version=version)
        for namespace_id, version in contents.namespaces:
            await tx.append(NamespaceDropped(namespace_id=namespace_id, warehouse_id=row.id), expected_version=version)
        await _forget_secret(tx, ctx, row.storage_credential)
        await _append(tx, row, WarehouseDeleted(warehouse_id=row.id, project_id=row.project_id))


async def _append(tx: Transaction, row: WarehouseRow, event: WarehouseEvent) -> None:
    await tx.append(event, expected_version=row.version)
