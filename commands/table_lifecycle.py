"""Drop, rename and register tables."""

from __future__ import annotations

import uuid

import msgspec
from pyiceberg.table.metadata import TableMetadata

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchTableError
from catalog_es.events import Json, TableDropped, TableRegistered, TableRenamed
from catalog_es.identifiers import Namespace, validate_name
from catalog_es.locations import require_inside_warehouse
from catalog_es.metadata.tables import parse_metadata
from catalog_es.state import TableRow, WarehouseRow
from catalog_es.storage.delete_profiles import purge_by_default
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext, off_loop
from commands.name_conflicts import rename_target_taken
from commands.table_writes import TableResult, claim_location, claim_name_and_location


class DropTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    purge_requested: bool | None  # None: the warehouse's delete profile decides
    metadata: EventMetadata


class RenameTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    source_namespace: Namespace
    source_name: str
    destination_namespace: Namespace
    destination_name: str
    metadata: EventMetadata


async def _read_registered(ctx: CommandContext, warehouse: WarehouseRow, metadata_location: str) -> Json:
    try:
        return await off_loop((await ctx.storage(warehouse)).read_metadata, metadata_location)
    except (OSError, ValueError, msgspec.DecodeError, EOFError) as exc:
        # The reason by its kind only: the text of a decoding error may quote the file.
        reason = "no such file" if isinstance(exc, FileNotFoundError) else type(exc).__name__
        raise BadRequestError(f"Cannot read metadata file {metadata_location}: {reason}") from None


def parse_registered(document: object, metadata_location: str) -> TableMetadata:
    """The table metadata in a registered file.

    Raises:
        BadRequestError: it is not table metadata (the message does not quote the file).
    """
    if not isinstance(document, dict):
        raise BadRequestError(f"{metadata_location} is not a table metadata file: not a JSON object")
    try:
        return parse_metadata(document)
    except BadRequestError:
        raise BadRequestError(f"{metadata_location} is not a valid table metadata file") from None


class RegisterTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    metadata_location: str
    overwrite: bool
    metadata: EventMetadata


def _missing(namespace: Namespace, name: str) -> NoSuchTableError:
    return NoSuchTableError(f"Table does not exist: {namespace}.{name}")


async def handle_drop_table(cmd: DropTable, ctx: CommandContext) -> None:
    """Drop the table; with `purge_requested` (when None: the delete profile's `purge-by-default`) its files are
    deleted after the drop commits.

    Purge deletes only what the catalog knows is the table's: the files its metadata references inside its
    own location (see `WarehouseStorage.purge_table`), never a whole directory it may share with others.

    Raises:
        NoSuchTableError: it does not exist.
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    purge = purge_by_default(warehouse.delete_profile) if cmd.purge_requested is None else cmd.purge_requested
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await ctx.state.table(tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if row is None:
            raise _missing(cmd.namespace, cmd.name)
        event = TableDropped(table_id=row.id, warehouse_id=row.warehouse_id, purge_requested=purge)
        await tx.append(event, expected_version=row.version)
    if purge:
        storage = await ctx.storage(warehouse)
        await off_loop(storage.purge_table, row.location, row.metadata_location, row.metadata)


async def handle_rename_table(cmd: RenameTable, ctx: CommandContext) -> None:
    """Rename, also into another namespace of the same warehouse.

    Raises:
        NoSuchTableError: the source does not exist.
        NoSuchNamespaceError: the destination namespace does not exist.
        AlreadyExistsError: a table or view holds the destination name.
    """
    try:
        validate_name(cmd.destination_name, "table")
    except ValueError as exc:
        raise BadRequestError(str(exc)) from None
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await ctx.state.table(tx.conn, cmd.warehouse_id, cmd.source_namespace, cmd.source_name)
        if row is None:
            raise _missing(cmd.source_namespace, cmd.source_name)
        destination = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.destination_namespace)
        taken = await ctx.state.table(tx.conn, cmd.warehouse_id, cmd.destination_namespace, cmd.destination_name)
        view = await ctx.state.view(tx.conn, cmd.warehouse_id, cmd.destination_namespace, cmd.destination_name)
        if (taken is not None and taken.id != row.id) or view is not None:
            raise rename_target_taken(
                cmd.source_namespace,
                cmd.source_name,
                cmd.destination_namespace,
                cmd.destination_name,
                "view" if view is not None else "table",
            )
        event = TableRenamed(
            table_id=row.id,
            warehouse_id=row.warehouse_id,
            from_namespace_id=row.namespace_id,
            from_name=row.name,
            namespace_id=destination.id,
            name=cmd.destination_name,
        )
        await tx.append(event, expected_version=row.version)


async def handle_register_table(cmd: RegisterTable, ctx: CommandContext) -> TableResult:
    """Adopt an existing metadata file as a table (with `overwrite`, replace the table's pointer).

    The table claims its location as its own (inside the warehouse, overlapping no other table) but, unlike a
    created table, not as an empty one: it holds the registered files. Purge therefore deletes only what the
    metadata references there (`WarehouseStorage.purge_table`), never whatever else the directory holds.
    The file is read only when it lies inside the warehouse; errors never quote its content.

    Raises:
        BadRequestError: the file is outside the warehouse, unreadable or not table metadata, or its table
            lies outside the warehouse or overlaps another table.
        NoSuchNamespaceError: the namespace does not exist.
        AlreadyExistsError: the name is taken and `overwrite` is not set.
    """
    try:
        validate_name(cmd.name, "table")
    except ValueError as exc:
        raise BadRequestError(str(exc)) from None
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    require_inside_warehouse(
        cmd.metadata_location, warehouse.location, warehouse.alternative_schemes
    )  # before anything is read
    document = await _read_registered(ctx, warehouse, cmd.metadata_location)
    metadata = parse_registered(document, cmd.metadata_location)
    async with ctx.store.transaction(cmd.metadata) as tx:
        namespace = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        existing: TableRow | None = await ctx.state.table(tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if existing is not None and not cmd.overwrite:
            raise AlreadyExistsError(f"Table already exists: {cmd.namespace}.{cmd.name}")
        table_id = existing.id if existing is not None else metadata.table_uuid
        if existing is not None:
            await claim_location(ctx, tx.conn, warehouse=warehouse, location=metadata.location, table_id=table_id)
        else:
            await claim_name_and_location(
                ctx,
                tx.conn,
                warehouse=warehouse,
                namespace=cmd.namespace,
                namespace_id=namespace.id,
                name=cmd.name,
                location=metadata.location,
                table_id=table_id,
            )
        event = TableRegistered(
            table_id=table_id,
            warehouse_id=warehouse.id,
            namespace_id=namespace.id,
            name=cmd.name,
            metadata_location=cmd.metadata_location,
            metadata=document,
        )
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))
    return TableResult(metadata_location=cmd.metadata_location, metadata=document)
