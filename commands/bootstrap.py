"""Bootstrap: the default project and a local-filesystem warehouse, created once."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.events import ProjectCreated, WarehouseCreated
from catalog_es.eventstore import EventMetadata
from catalog_es.identifiers import NIL_PROJECT_ID
from catalog_es.locations import normalize_location
from commands.context import CommandContext


class EnsureDefaultWarehouse(msgspec.Struct, frozen=True):
    """`location` None: the project only (file storage is not allowed where the default warehouse would be)."""

    warehouse_name: str
    location: str | None
    metadata: EventMetadata
    project_id: uuid.UUID = NIL_PROJECT_ID
    project_name: str = "default"


async def handle_ensure_default_warehouse(cmd: EnsureDefaultWarehouse, ctx: CommandContext) -> uuid.UUID | None:
    """Create the project and the warehouse unless they exist; return the warehouse id (None without one)."""
    async with ctx.store.transaction(cmd.metadata) as tx:
        if not await ctx.state.project_exists(tx.conn, cmd.project_id):
            await tx.append(ProjectCreated(project_id=cmd.project_id, name=cmd.project_name), expected_version=0)
        existing = await ctx.state.warehouse_by_name(tx.conn, cmd.project_id, cmd.warehouse_name)
        if existing is not None:
            return existing.id
        if cmd.location is None:
            return None
        warehouse = WarehouseCreated(
            warehouse_id=ctx.ids.new_id(),
            project_id=cmd.project_id,
            name=cmd.warehouse_name,
            storage_profile={"type": "file", "location": normalize_location(cmd.location)},
        )
        await tx.append(warehouse, expected_version=0)
    return warehouse.warehouse_id
