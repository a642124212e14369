"""Drop, rename and register tables and views: one path for both kinds (`TabularKind` owns what differs)."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json
from catalog_es.identifiers import Namespace, name_key
from catalog_es.locations import require_inside_warehouse
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.storage.delete_profiles import purge_by_default
from catalog_es.store.eventstore import EventMetadata
from catalog_es.tabular_kind import TABLE, VIEW, TabularKind
from commands.context import CommandContext, off_loop
from commands.name_conflicts import rename_target_taken, require_name_free
from commands.protection import require_unprotected_tabular
from commands.soft_delete import soft_drop_tabular, soft_expiration_seconds
from commands.tabular_purge import purge_task
from commands.tabulars import TabularResult, claim_location, claim_new_tabular
from commands.tasks import schedule_task


class DropTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    purge_requested: bool | None  # None: the warehouse's delete profile decides
    metadata: EventMetadata
    force: bool = False  # overrides protection (the API lets only the warehouse's modifiers force)


class DropView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    metadata: EventMetadata
    force: bool = False  # overrides protection


class RenameTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    source_namespace: Namespace
    source_name: str
    destination_namespace: Namespace
    destination_name: str
    metadata: EventMetadata


class RenameView(RenameTable, frozen=True):
    """The same request for a view (REST `renameView` takes the body of `renameTable`)."""


class RegisterTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    metadata_location: str
    overwrite: bool
    metadata: EventMetadata


class RegisterView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    metadata_location: str
    metadata: EventMetadata


async def handle_drop_table(cmd: DropTable, ctx: CommandContext) -> None:
    """Drop the table; with `purge_requested` (when None: the delete profile's `purge-by-default`) a
    `tabular_purge` task is scheduled in the drop's own transaction and a worker deletes the files
    (`commands/tabular_purge.py`). On a soft-delete warehouse the table is only hidden (commands/soft_delete.py)
    and its purge is scheduled when it expires (commands/expiration.py).

    Purge deletes only what the catalog knows is the table's: the files its metadata references inside its
    own location (see `WarehouseStorage.purge_table`), never a whole directory it may share with others.

    Raises:
        NoSuchTableError: it does not exist.
        ProtectedError: it is protected and the drop is not forced.
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    purge = purge_by_default(warehouse.delete_profile) if cmd.purge_requested is None else cmd.purge_requested
    await _drop(TABLE, ctx, warehouse, cmd.namespace, cmd.name, cmd.metadata, purge=purge, force=cmd.force)


async def handle_drop_view(cmd: DropView, ctx: CommandContext) -> None:
    """Drop the view; its metadata files stay (they can be registered again).

    Raises:
        NoSuchViewError: it does not exist.
        ProtectedError: it is protected and the drop is not forced.
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    await _drop(VIEW, ctx, warehouse, cmd.namespace, cmd.name, cmd.metadata, purge=False, force=cmd.force)


async def _drop(
    kind: TabularKind,
    ctx: CommandContext,
    warehouse: WarehouseRow,
    namespace: Namespace,
    name: str,
    metadata: EventMetadata,
    *,
    purge: bool,
    force: bool = False,
) -> TabularRow:
    seconds = soft_expiration_seconds(warehouse)
    async with ctx.store.transaction(metadata) as tx:
        row = await kind.row(ctx.state, tx.conn, warehouse.id, namespace, name)
        if row is None:
            raise kind.missing(namespace, name)
        await require_unprotected_tabular(ctx, tx.conn, row.kind, row.id, f"{namespace}.{row.name}", force=force)
        if seconds is not None:
            await soft_drop_tabular(tx, ctx, warehouse, row, purge=purge, seconds=seconds)
            return row
        await tx.append(kind.dropped(row.id, row.warehouse_id, purge=purge), expected_version=row.version)
        if purge and kind.purgeable:
            await schedule_task(tx, ctx, purge_task(warehouse.id, row))
    return row


async def handle_rename_table(cmd: RenameTable, ctx: CommandContext) -> None:
    """Rename a table, also into another namespace of the same warehouse (see `_rename`)."""
    await _rename(TABLE, cmd, ctx)


async def handle_rename_view(cmd: RenameView, ctx: CommandContext) -> None:
    """Rename a view, also into another namespace of the same warehouse (see `_rename`)."""
    await _rename(VIEW, cmd, ctx)


async def _rename(kind: TabularKind, cmd: RenameTable, ctx: CommandContext) -> None:
    """Rename; a change of case only is allowed, as the name then still holds the same tabular.

    Raises:
        BadRequestError: the new name is invalid.
        NoSuchTableError, NoSuchViewError: the source does not exist.
        NoSuchNamespaceError: the destination namespace does not exist.
        AlreadyExistsError: a table or view holds the destination name.
    """
    kind.validate_name(cmd.destination_name)
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await kind.row(ctx.state, tx.conn, cmd.warehouse_id, cmd.source_namespace, cmd.source_name)
        if row is None:
            raise kind.missing(cmd.source_namespace, cmd.source_name)
        destination = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.destination_namespace)
        only_case_changes = destination.id == row.namespace_id and name_key(cmd.destination_name) == name_key(row.name)
        if not only_case_changes:
            await require_name_free(
                ctx,
                tx.conn,
                cmd.warehouse_id,
                cmd.destination_namespace,
                destination.id,
                cmd.destination_name,
                taken=rename_target_taken(cmd.source_namespace, cmd.source_name),
            )
        await tx.append(kind.renamed(row, destination.id, cmd.destination_name), expected_version=row.version)


async def handle_register_table(cmd: RegisterTable, ctx: CommandContext) -> TabularResult:
    """Adopt an existing metadata file as a table (with `overwrite`, replace the table's pointer).

    The table claims its location as its own (inside the warehouse, overlapping no other table) but, unlike a
    created table, not as an empty one: it holds the registered files. Purge therefore deletes only what the
    metadata references there (`WarehouseStorage.purge_table`), never whatever else the directory holds.
    """
    return await _register(TABLE, cmd, ctx, overwrite=cmd.overwrite)


async def handle_register_view(cmd: RegisterView, ctx: CommandContext) -> TabularResult:
    """Adopt an existing view metadata file under a name (a view claims no location beyond the warehouse)."""
    return await _register(VIEW, cmd, ctx, overwrite=False)


async def _register(
    kind: TabularKind, cmd: RegisterTable | RegisterView, ctx: CommandContext, *, overwrite: bool
) -> TabularResult:
    """Adopt a file. It is read only when it lies inside the warehouse; errors never quote its content.

    Raises:
        BadRequestError: the file is outside the warehouse, unreadable or not metadata of the kind, or the
            tabular lies outside the warehouse or (a table) overlaps another table.
        NoSuchNamespaceError: the namespace does not exist.
        AlreadyExistsError: the name is taken (by the same kind: unless `overwrite`), or the id is.
    """
    kind.validate_name(cmd.name)
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    location = cmd.metadata_location
    require_inside_warehouse(location, warehouse.location, warehouse.alternative_schemes)  # before it is read
    document = await _read_registered(ctx, warehouse, location)
    adopted = kind.parse_adopted(document, location)
    if not kind.claims_location:  # a table's location is checked with its overlap, under the lock
        require_inside_warehouse(adopted.location, warehouse.location, warehouse.alternative_schemes)
    async with ctx.store.transaction(cmd.metadata) as tx:
        namespace = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        existing = await kind.row(ctx.state, tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if existing is not None and not overwrite:
            raise kind.name_taken(cmd.namespace, cmd.name, kind)
        tabular_id = existing.id if existing is not None else adopted.id
        if existing is not None:  # a table's pointer replaced: its location stays its own
            await claim_location(ctx, tx.conn, warehouse=warehouse, location=adopted.location, table_id=tabular_id)
        else:
            await claim_new_tabular(
                ctx,
                tx.conn,
                kind,
                warehouse=warehouse,
                namespace=cmd.namespace,
                namespace_id=namespace.id,
                name=cmd.name,
                location=adopted.location,
                tabular_id=tabular_id,
            )
        event = kind.registered(tabular_id, warehouse.id, namespace.id, cmd.name, location, document)
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))
    return TabularResult(metadata_location=location, metadata=document)


async def _read_registered(ctx: CommandContext, warehouse: WarehouseRow, metadata_location: str) -> Json:
    try:
        return await off_loop((await ctx.storage(warehouse)).read_metadata, metadata_location)
    except (OSError, ValueError, msgspec.DecodeError, EOFError) as exc:
        # The reason by its kind only: the text of a decoding error may quote the file.
        reason = "no such file" if isinstance(exc, FileNotFoundError) else type(exc).__name__
        raise BadRequestError(f"Cannot read metadata file {metadata_location}: {reason}") from None
