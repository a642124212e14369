"""Shared steps of table writes: the result shape, location checks, and metadata-file-then-append."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress

import msgspec

from catalog_es.errors import AlreadyExistsError, InvalidLocationError
from catalog_es.events import Json
from catalog_es.identifiers import Namespace
from catalog_es.locations import require_inside_warehouse
from catalog_es.state import WarehouseRow
from catalog_es.storage.files import WarehouseStorage
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata, Transaction
from commands.context import CommandContext, off_loop
from commands.name_conflicts import name_holder, table_name_taken


class TableResult(msgspec.Struct, frozen=True):
    """What a client gets back: the metadata, and where it is stored (None while only staged)."""

    metadata_location: str | None
    metadata: Json


async def claim_name_and_location(
    ctx: CommandContext,
    conn: Connection,
    *,
    warehouse: WarehouseRow,
    namespace: Namespace,
    namespace_id: uuid.UUID,
    name: str,
    location: str,
    table_id: uuid.UUID,
) -> None:
    """Check that a new table's name is free and its location is its own.

    Raises:
        AlreadyExistsError: a table by that name (any case) or with that id exists.
        InvalidLocationError: the location is outside the warehouse or overlaps another table.
    """
    conflict = await ctx.state.table_claim_conflict(conn, warehouse.id, namespace_id, name, table_id, location)
    if conflict == "name":
        raise table_name_taken(namespace, name, await name_holder(ctx, conn, warehouse.id, namespace, name))
    if conflict == "id":
        raise AlreadyExistsError(f"A table with uuid {table_id} already exists")
    require_inside_warehouse(location, warehouse.location, warehouse.alternative_schemes)
    if conflict == "location":
        raise InvalidLocationError(f"Location {location} overlaps the location of another table")


async def claim_location(
    ctx: CommandContext, conn: Connection, *, warehouse: WarehouseRow, location: str, table_id: uuid.UUID
) -> None:
    """Raises: InvalidLocationError, when outside the warehouse or overlapping another table."""
    require_inside_warehouse(location, warehouse.location, warehouse.alternative_schemes)
    if await ctx.state.location_taken(conn, warehouse.id, location, except_table=table_id):
        raise InvalidLocationError(f"Location {location} overlaps the location of another table")


async def claim_new_location(
    ctx: CommandContext, storage: WarehouseStorage, *, warehouse: WarehouseRow, location: str, table_id: uuid.UUID
) -> None:
    """The claim rules of a table's new location (create, staged create, `set-location`), before any IO.

    Strictly inside the warehouse (which also refuses another scheme or bucket: no FileIO is ever built
    for it), not another table's, and empty. The append transaction checks the overlap again under its lock.

    Raises:
        InvalidLocationError: outside the warehouse, overlapping another table, or not empty.
    """
    async with ctx.store.connection() as conn:
        await claim_location(ctx, conn, warehouse=warehouse, location=location, table_id=table_id)
    if not await off_loop(storage.is_empty, location):
        raise InvalidLocationError(f"Table location {location} is not empty")


@asynccontextmanager
async def metadata_written(
    ctx: CommandContext,
    storage: WarehouseStorage,
    metadata_location: str,
    document: Json,
    event_metadata: EventMetadata,
    *,
    serialised: bool = True,
) -> AsyncIterator[Transaction]:
    """Write the metadata file first (no lock held during IO), then open the append transaction.

    If the transaction does not commit, the file is deleted again (best effort). `serialised`: see
    `EventStore.transaction`.
    """
    files = [(metadata_location, document)]
    async with metadata_files_written(ctx, storage, files, event_metadata, serialised=serialised) as tx:
        yield tx


@asynccontextmanager
async def metadata_files_written(
    ctx: CommandContext,
    storage: WarehouseStorage,
    files: Sequence[tuple[str, Json]],
    event_metadata: EventMetadata,
    *,
    serialised: bool = True,
) -> AsyncIterator[Transaction]:
    """`metadata_written` for several files: all are written before, and deleted unless, the commit.

    On failure the directories the writes created (`metadata/`, a new table's location) go too when left
    empty, best effort. A crash between write and commit can still leave a metadata file no event names; it
    lies inside the table's own location, where nothing reads it.
    """
    attempted: list[str] = []
    written: list[str] = []
    try:
        for location, document in files:
            attempted.append(location)
            await off_loop(storage.write_metadata, location, document)
            written.append(location)
        async with ctx.store.transaction(event_metadata, serialised=serialised) as tx:
            yield tx
    except BaseException:
        for location in attempted:
            with suppress(Exception):
                if location in written:
                    await off_loop(storage.delete_file, location)
                await off_loop(storage.remove_empty_parents, location)
        raise
