"""Replace a view: its requirements checked and updates applied, then compare-and-swap on its stream."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import CommitFailedError
from catalog_es.events import Json, ViewCommitted
from catalog_es.identifiers import Namespace
from catalog_es.locations import require_inside_warehouse
from catalog_es.metadata.table_changes import metadata_digest
from catalog_es.metadata.views import (
    commit_view,
    next_view_metadata_location,
    parse_view_metadata,
    view_metadata_to_json,
)
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError
from catalog_es.tabular_kind import VIEW
from commands.context import CommandContext
from commands.tabulars import TabularResult, metadata_written


class CommitView(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    requirements: list[Json]
    updates: list[Json]
    metadata: EventMetadata


async def handle_commit_view(cmd: CommitView, ctx: CommandContext) -> TabularResult:
    """Commit to a view (the REST replaceView); a commit that changes nothing writes nothing.

    Raises:
        NoSuchViewError: the view does not exist.
        CommitFailedError: a requirement failed or a concurrent change won (409).
        BadRequestError: an update is unknown or invalid.
        InvalidLocationError: a new location is not strictly inside the warehouse.
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    async with ctx.store.connection() as conn:
        current = await ctx.state.view(conn, cmd.warehouse_id, cmd.namespace, cmd.name)
    if current is None:
        raise VIEW.missing(cmd.namespace, cmd.name)
    base = parse_view_metadata(current.metadata)
    now_ms = ctx.now_ms()
    updated = commit_view(base, cmd.requirements, cmd.updates, now_ms=now_ms)
    if updated == base:
        return TabularResult(metadata_location=current.metadata_location, metadata=current.metadata)
    if updated.location != base.location:
        require_inside_warehouse(updated.location, warehouse.location, warehouse.alternative_schemes)
    metadata_location = next_view_metadata_location(updated, current.metadata_location, ctx.ids.new_id())
    # `write.metadata.path` may point elsewhere
    require_inside_warehouse(metadata_location, warehouse.location, warehouse.alternative_schemes)
    document = view_metadata_to_json(updated)
    storage = await ctx.storage(warehouse)
    try:  # a compare-and-swap on the view's stream: nothing else to check under the counter lock
        async with metadata_written(ctx, storage, metadata_location, document, cmd.metadata, serialised=False) as tx:
            event = ViewCommitted(
                view_id=current.id,
                warehouse_id=warehouse.id,
                requirements=cmd.requirements,
                updates=cmd.updates,
                previous_metadata_location=current.metadata_location,
                metadata_location=metadata_location,
                applied_at_ms=now_ms,
                metadata_sha256=metadata_digest(document),
                metadata=document if updated.location != base.location else None,  # see `ViewCommitted`
            )
            await tx.append(event, expected_version=current.version, document=document)
    except StreamVersionConflictError:
        raise CommitFailedError(f"View {cmd.namespace}.{cmd.name} was changed concurrently") from None
    return TabularResult(metadata_location=metadata_location, metadata=document)
