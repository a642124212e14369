"""Create a table, or stage one for a later `assert-create` commit (Spark's CTAS)."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.events import Json, TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.locations import as_written, require_inside_warehouse
from catalog_es.metadata.tables import metadata_to_json, new_metadata, next_metadata_location, table_directories
from catalog_es.storage.layout import table_location
from catalog_es.store.eventstore import EventMetadata
from catalog_es.tabular_kind import TABLE
from commands.context import CommandContext, off_loop
from commands.name_conflicts import require_name_free
from commands.tabulars import (
    TabularResult,
    claim_name_and_location,
    claim_new_location,
    metadata_written,
)


class CreateTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    schema: Json
    metadata: EventMetadata
    location: str | None = None
    partition_spec: Json | None = None
    write_order: Json | None = None
    properties: dict[str, str] = {}
    stage_create: bool = False


async def handle_create_table(cmd: CreateTable, ctx: CommandContext) -> TabularResult:
    """Create the table (or only stage it: nothing is written or recorded then).

    Raises:
        BadRequestError: invalid name, schema, spec or order.
        InvalidLocationError: the location is outside the warehouse, taken, or not empty.
        NoSuchNamespaceError: the namespace does not exist.
        AlreadyExistsError: a table by that name exists.
    """
    TABLE.validate_name(cmd.name)
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    table_id = ctx.ids.new_id()
    async with ctx.store.connection() as conn:
        namespace = await ctx.existing_namespace(conn, cmd.warehouse_id, cmd.namespace)
        await require_name_free(ctx, conn, warehouse.id, cmd.namespace, namespace.id, cmd.name, taken=TABLE.name_taken)
    base = namespace.properties.get("location", f"{warehouse.location}/{namespace.id}")
    layout = warehouse.storage_profile.get("storage-layout")
    default = table_location(layout, warehouse.location, base, cmd.name, table_id)
    written = as_written(cmd.location or default)  # kept in the metadata as the client spelled it
    location = require_inside_warehouse(written, warehouse.location, warehouse.alternative_schemes)
    metadata = new_metadata(
        schema=cmd.schema,
        partition_spec=cmd.partition_spec,
        write_order=cmd.write_order,
        location=written,
        properties=cmd.properties,
        table_uuid=table_id,
        last_updated_ms=ctx.now_ms(),
    )
    storage = await ctx.storage(warehouse)
    await claim_new_location(ctx, storage, warehouse=warehouse, location=location, table_id=table_id)
    if cmd.stage_create:
        await off_loop(storage.make_directories, table_directories(metadata))
        return TabularResult(metadata_location=None, metadata=metadata_to_json(metadata))
    metadata_location = next_metadata_location(metadata, None)
    document = metadata_to_json(metadata)
    async with metadata_written(ctx, storage, metadata_location, document, cmd.metadata) as tx:
        await claim_name_and_location(
            ctx,
            tx.conn,
            warehouse=warehouse,
            namespace=cmd.namespace,
            namespace_id=namespace.id,
            name=cmd.name,
            location=location,
            table_id=table_id,
        )
        event = TableCreated(
            table_id=table_id,
            warehouse_id=warehouse.id,
            namespace_id=namespace.id,
            name=cmd.name,
            metadata_location=metadata_location,
            metadata=document,
        )
        await tx.append(event, expected_version=0)
    return TabularResult(metadata_location=metadata_location, metadata=document)
