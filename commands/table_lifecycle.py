"""Drop, rename and register tables."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchTableError
from catalog_es.events import TableDropped, TableRegistered, TableRenamed
from catalog_es.eventstore import EventMetadata
from catalog_es.identifiers import Namespace, validate_name
from catalog_es.locations import require_inside_warehouse
from catalog_es.state import TableRow
from catalog_es.table_metadata import parse_metadata
from commands.context import CommandContext, off_loop
from commands.name_conflicts import rename_target_taken
from commands.table_writes import TableResult, claim_name_and_location


class DropTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    purge_requested: bool
    metadata: EventMetadata


class RenameTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    source_namespace: Namespace
    source_name: str
    destination_namespace: Namespace
    destination_name: str
    metadata: EventMetadata


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
    """Drop the table; with `purge_requested` its files are deleted after the drop commits.

    Raises:
        NoSuchTableError: it does not exist.
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await ctx.state.table(tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if row is None:
            raise _missing(cmd.namespace, cmd.name)
        event = TableDropped(table_id=row.id, warehouse_id=row.warehouse_id, purge_requested=cmd.purge_requested)
        await tx.append(event, expected_version=row.version)
    if cmd.purge_requested:
        await off_loop((await ctx.storage(warehouse)).purge, row.location)


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

    Raises:
        BadRequestError: the file cannot be read or its table lies outside the warehouse.
        NoSuchNamespaceError: the namespace does not exist.
        AlreadyExistsError: the name is taken and `overwrite` is not set.
    """
    try:
        validate_name(cmd.name, "table")
    except ValueError as exc:
        raise BadRequestError(str(exc)) from None
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    require_inside_warehouse(cmd.metadata_location, warehouse.location)
    try:
        document = await off_loop((await ctx.storage(warehouse)).read_metadata, cmd.metadata_location)
    except (OSError, ValueError) as exc:
        raise BadRequestError(f"Cannot read metadata file {cmd.metadata_location}: {exc}") from None
    metadata = parse_metadata(document)
    async with ctx.store.transaction(cmd.metadata) as tx:
        namespace = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        existing: TableRow | None = await ctx.state.table(tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if existing is not None and not cmd.overwrite:
            raise AlreadyExistsError(f"Table already exists: {cmd.namespace}.{cmd.name}")
        table_id = existing.id if existing is not None else metadata.table_uuid
        if existing is None:
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
