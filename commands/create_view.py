"""Create a view: first metadata decided, written to storage, then recorded."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.events import Json, ViewCreated
from catalog_es.identifiers import Namespace
from catalog_es.locations import as_written, require_inside_warehouse
from catalog_es.metadata.views import new_view_metadata, next_view_metadata_location, view_metadata_to_json
from catalog_es.storage.layout import table_location
from catalog_es.store.eventstore import EventMetadata
from catalog_es.tabular_kind import VIEW
from commands.context import CommandContext
from commands.tabulars import TabularResult, claim_name, metadata_written


class CreateView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    schema: Json
    view_version: Json
    metadata: EventMetadata
    location: str | None = None
    properties: dict[str, str] = {}


async def handle_create_view(cmd: CreateView, ctx: CommandContext) -> TabularResult:
    """Create the view, by default at `<namespace location>/<view id>`.

    Raises:
        BadRequestError: invalid name, schema or view version.
        InvalidLocationError: the location is not strictly inside the warehouse.
        NoSuchNamespaceError: the namespace does not exist.
        AlreadyExistsError: a table or view by that name exists.
    """
    VIEW.validate_name(cmd.name)
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    view_id = ctx.ids.new_id()
    async with ctx.store.connection() as conn:
        namespace = await ctx.existing_namespace(conn, cmd.warehouse_id, cmd.namespace)
        await claim_name(
            ctx,
            conn,
            VIEW,
            warehouse_id=cmd.warehouse_id,
            namespace=cmd.namespace,
            namespace_id=namespace.id,
            name=cmd.name,
            tabular_id=view_id,
        )
    base = namespace.properties.get("location", f"{warehouse.location}/{namespace.id}")
    layout = warehouse.storage_profile.get("storage-layout")
    default = table_location(layout, warehouse.location, base, cmd.name, view_id)
    written = as_written(cmd.location or default)  # kept in the metadata as the client spelled it
    require_inside_warehouse(written, warehouse.location, warehouse.alternative_schemes)
    metadata = new_view_metadata(
        view_uuid=view_id,
        location=written,
        schema=cmd.schema,
        view_version=cmd.view_version,
        properties=cmd.properties,
        now_ms=ctx.now_ms(),
    )
    metadata_location = next_view_metadata_location(metadata, None, ctx.ids.new_id())
    require_inside_warehouse(metadata_location, warehouse.location)  # `write.metadata.path` may point elsewhere
    document = view_metadata_to_json(metadata)
    async with metadata_written(ctx, await ctx.storage(warehouse), metadata_location, document, cmd.metadata) as tx:
        namespace = await ctx.existing_namespace(tx.conn, cmd.warehouse_id, cmd.namespace)
        await claim_name(
            ctx,
            tx.conn,
            VIEW,
            warehouse_id=cmd.warehouse_id,
            namespace=cmd.namespace,
            namespace_id=namespace.id,
            name=cmd.name,
            tabular_id=view_id,
        )
        event = ViewCreated(
            view_id=view_id,
            warehouse_id=warehouse.id,
            namespace_id=namespace.id,
            name=cmd.name,
            metadata_location=metadata_location,
            metadata=document,
        )
        await tx.append(event, expected_version=0)
    return TabularResult(metadata_location=metadata_location, metadata=document)
