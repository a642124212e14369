"""Drop, rename and register tables and views: one path for both kinds (`TabularKind` names what differs)."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError
from catalog_es.events import Json
from catalog_es.identifiers import Namespace, name_key
from catalog_es.locations import require_inside_warehouse
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.storage.delete_profiles import purge_by_default
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext, off_loop
from commands.name_conflicts import name_holder, rename_target_taken
from commands.tabular_purge import purge_task
from commands.tabulars import (
    TABLE,
    VIEW,
    TabularKind,
    TabularResult,
    claim_location,
    claim_name,
    claim_name_and_location,
)
from commands.tasks import schedule_task


class DropTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    purge_requested: bool | None  # None: the warehouse's delete profile decides
    metadata: EventMetadata


class DropView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    metadata: EventMetadata


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
    (`commands/tabular_purge.py`).

    Purge deletes only what the catalog knows is the table's: the files its metadata references inside its
    own location (see `WarehouseStorage.purge_table`), never a whole directory it may share with others.

    Raises:
        NoSuchTableError: it does not exist.
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    purge = purge_by_default(warehouse.delete_profile) if cmd.purge_requested is None else cmd.purge_requested
    await _drop(TABLE, ctx, cmd.warehouse_id, cmd.namespace, cmd.name, cmd.metadata, purge=purge)


async def handle_drop_view(cmd: DropView, ctx: CommandContext) -> None:
    """Drop the view; its metadata files stay (they can be registered again).

    Raises:
        NoSuchViewError: it does not exist.
    """
    await _drop(VIEW, ctx, cmd.warehouse_id, cmd.namespace, cmd.name, cmd.metadata, purge=False)


async def _drop(
    kind: TabularKind,
    ctx: CommandContext,
    warehouse_id: uuid.UUID,
    namespace: Namespace,
    name: str,
    metadata: EventMetadata,
    *,
    purge: bool,
) -> TabularRow:
    async with ctx.store.transaction(metadata) as tx:
        row = await kind.row(ctx, tx.conn, warehouse_id, namespace, name)
        if row is None:
            raise kind.missing(namespace, name)
        await tx.append(kind.dropped(row, purge), expected_version=row.version)
        if purge and kind is TABLE:
            await schedule_task(tx, ctx, purge_task(warehouse_id, row))
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
        row = await kind.row(ctx, tx.conn, cmd.warehouse_id, cmd.source_namespace, cmd.source_name)
        if row is None:
            raise kind.missing(cmd.source_namespace, cmd.source_name)
        destination = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.destination_namespace)
        only_case_changes = destination.id == row.namespace_id and name_key(cmd.destination_name) == name_key(row.name)
        if not only_case_changes and await ctx.state.table_name_taken(tx.conn, destination.id, cmd.destination_name):
            holder = await name_holder(ctx, tx.conn, cmd.warehouse_id, cmd.destination_namespace, cmd.destination_name)
            raise rename_target_taken(
                cmd.source_namespace, cmd.source_name, cmd.destination_namespace, cmd.destination_name, holder
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
    if kind is VIEW:  # a table's location is checked with its overlap, under the lock
        require_inside_warehouse(adopted.location, warehouse.location, warehouse.alternative_schemes)
    async with ctx.store.transaction(cmd.metadata) as tx:
        namespace = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        existing = await kind.row(ctx, tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if existing is not None and not overwrite:
            raise AlreadyExistsError(f"{kind.title} already exists: {cmd.namespace}.{cmd.name}")
        tabular_id = existing.id if existing is not None else adopted.id
        if existing is not None:  # a table's pointer replaced: its location stays its own
            await claim_location(ctx, tx.conn, warehouse=warehouse, location=adopted.location, table_id=tabular_id)
        elif kind is TABLE:
            await claim_name_and_location(
                ctx,
                tx.conn,
                warehouse=warehouse,
                namespace=cmd.namespace,
                namespace_id=namespace.id,
                name=cmd.name,
                location=adopted.location,
                table_id=tabular_id,
            )
        else:
            await claim_name(
                ctx,
                tx.conn,
                kind,
                warehouse_id=warehouse.id,
                namespace=cmd.namespace,
                namespace_id=namespace.id,
                name=cmd.name,
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
