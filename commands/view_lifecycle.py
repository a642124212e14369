"""Drop, rename and register views."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import ViewDropped, ViewRegistered, ViewRenamed
from catalog_es.identifiers import Namespace, name_key, validate_name
from catalog_es.locations import require_inside_warehouse
from catalog_es.metadata.views import parse_view_metadata
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext, off_loop
from commands.name_conflicts import name_holder, rename_target_taken
from commands.view_writes import ViewResult, claim_view_name, missing_view


class DropView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    metadata: EventMetadata


class RenameView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    source_namespace: Namespace
    source_name: str
    destination_namespace: Namespace
    destination_name: str
    metadata: EventMetadata


class RegisterView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    metadata_location: str
    metadata: EventMetadata


def _valid_name(name: str) -> None:
    try:
        validate_name(name, "view")
    except ValueError as exc:
        raise BadRequestError(str(exc)) from None


async def handle_drop_view(cmd: DropView, ctx: CommandContext) -> None:
    """Drop the view; its metadata files stay (they can be registered again).

    Raises:
        NoSuchViewError: it does not exist.
    """
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await ctx.state.view(tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if row is None:
            raise missing_view(cmd.namespace, cmd.name)
        await tx.append(ViewDropped(view_id=row.id, warehouse_id=row.warehouse_id), expected_version=row.version)


async def handle_rename_view(cmd: RenameView, ctx: CommandContext) -> None:
    """Rename, also into another namespace of the same warehouse.

    Raises:
        BadRequestError: the new name is invalid.
        NoSuchViewError: the source does not exist.
        NoSuchNamespaceError: the destination namespace does not exist.
        AlreadyExistsError: a table or view holds the destination name.
    """
    _valid_name(cmd.destination_name)
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await ctx.state.view(tx.conn, cmd.warehouse_id, cmd.source_namespace, cmd.source_name)
        if row is None:
            raise missing_view(cmd.source_namespace, cmd.source_name)
        destination = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.destination_namespace)
        only_case_changes = destination.id == row.namespace_id and name_key(cmd.destination_name) == name_key(row.name)
        if not only_case_changes and await ctx.state.table_name_taken(tx.conn, destination.id, cmd.destination_name):
            holder = await name_holder(ctx, tx.conn, cmd.warehouse_id, cmd.destination_namespace, cmd.destination_name)
            raise rename_target_taken(
                cmd.source_namespace, cmd.source_name, cmd.destination_namespace, cmd.destination_name, holder
            )
        event = ViewRenamed(
            view_id=row.id,
            warehouse_id=row.warehouse_id,
            from_namespace_id=row.namespace_id,
            from_name=row.name,
            namespace_id=destination.id,
            name=cmd.destination_name,
        )
        await tx.append(event, expected_version=row.version)


async def handle_register_view(cmd: RegisterView, ctx: CommandContext) -> ViewResult:
    """Adopt an existing view metadata file under a name.

    Raises:
        BadRequestError: the file cannot be read, is not view metadata, or lies outside the warehouse.
        NoSuchNamespaceError: the namespace does not exist.
        AlreadyExistsError: a table or view holds the name, or a view with the file's uuid exists.
    """
    _valid_name(cmd.name)
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    require_inside_warehouse(cmd.metadata_location, warehouse.location, warehouse.alternative_schemes)
    try:
        document = await off_loop((await ctx.storage(warehouse)).read_metadata, cmd.metadata_location)
    except (OSError, ValueError, msgspec.DecodeError) as exc:
        raise BadRequestError(f"Cannot read metadata file {cmd.metadata_location}: {exc}") from None
    metadata = parse_view_metadata(document)
    require_inside_warehouse(metadata.location, warehouse.location, warehouse.alternative_schemes)
    try:
        view_id = uuid.UUID(metadata.view_uuid)
    except ValueError:
        raise BadRequestError(f"Invalid view-uuid in {cmd.metadata_location}: {metadata.view_uuid!r}") from None
    async with ctx.store.transaction(cmd.metadata) as tx:
        namespace = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        await claim_view_name(
            ctx,
            tx.conn,
            warehouse_id=cmd.warehouse_id,
            namespace=cmd.namespace,
            namespace_id=namespace.id,
            name=cmd.name,
            view_id=view_id,
        )
        event = ViewRegistered(
            view_id=view_id,
            warehouse_id=warehouse.id,
            namespace_id=namespace.id,
            name=cmd.name,
            metadata_location=cmd.metadata_location,
            metadata=document,
        )
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))
    return ViewResult(metadata_location=cmd.metadata_location, metadata=document)
