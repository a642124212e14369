"""Restore a table to an earlier metadata file of its own history: the pointer moves back, as an event."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import BadRequestError, CommitFailedError, NoSuchTableError
from catalog_es.events import Json
from catalog_es.events.lifecycle import TableRestored
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError
from commands.context import CommandContext, off_loop


class RestoreTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    table_id: uuid.UUID
    metadata_location: str
    metadata: EventMetadata


async def handle_restore_table(cmd: RestoreTable, ctx: CommandContext) -> Json:
    """Point the table at `metadata_location` again; returns the metadata it now has.

    Only a location this table's own events recorded is accepted (never another table's file, nor one the
    catalog never wrote), and the file must still exist: engines read it. Snapshots expired since are gone
    from it too: restoring a pointer does not bring deleted data files back.

    Raises:
        NoSuchTableError: no live table with this id in the warehouse.
        BadRequestError: the location was never this table's, is its current one, or its file is gone.
        CommitFailedError: the table was committed to since it was read (409: retry).
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    async with ctx.store.connection() as conn:
        row = await ctx.deleted().live_table(conn, cmd.warehouse_id, cmd.table_id)
        if row is None:
            raise NoSuchTableError(f"Table {cmd.table_id} does not exist")
        document = await ctx.deleted().recorded_metadata(conn, cmd.table_id, cmd.metadata_location)
    if document is None:
        raise BadRequestError(f"{cmd.metadata_location} is not a metadata file of table {cmd.table_id}")
    if cmd.metadata_location == row.metadata_location:
        raise BadRequestError(f"Table {cmd.table_id} is at {cmd.metadata_location} already")
    storage = await ctx.storage(warehouse)
    try:
        await off_loop(storage.read_metadata, cmd.metadata_location)
    except (OSError, ValueError, EOFError):
        raise BadRequestError(f"Metadata file {cmd.metadata_location} cannot be read any more") from None
    event = TableRestored(
        table_id=row.id,
        warehouse_id=row.warehouse_id,
        previous_metadata_location=row.metadata_location,
        metadata_location=cmd.metadata_location,
        metadata=document,
    )
    try:
        async with ctx.store.transaction(cmd.metadata) as tx:
            await tx.append(event, expected_version=row.version)
    except StreamVersionConflictError:  # a commit since the read (outside the transaction): 409, try again
        raise CommitFailedError(f"Table {cmd.table_id} was changed concurrently; retry the restore") from None
    return document
