"""What tables and views share when written: the result, the claims, and metadata-file-then-append."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress

import msgspec

from catalog_es.errors import AlreadyExistsError, InvalidLocationError, MetadataFileNotFoundError
from catalog_es.events import Json
from catalog_es.identifiers import Namespace
from catalog_es.locations import require_inside_warehouse
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.storage.files import WarehouseStorage
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata, Transaction
from catalog_es.tabular_kind import TABLE, TabularKind
from commands.context import CommandContext, off_loop
from commands.name_conflicts import name_holder, require_name_free


class TabularResult(msgspec.Struct, frozen=True):
    """What a client gets back: the metadata, and where it is stored (None while a table is only staged)."""

    metadata_location: str | None
    metadata: Json
    encoded: bytes | None = None  # `metadata` as JSON, when the command encoded it already (a commit, for its file)

    @property
    def stored_location(self) -> str:
        """The location of a stored result (views are never staged)."""
        if self.metadata_location is None:
            raise AssertionError("a staged result has no metadata location")
        return self.metadata_location


async def claim_name(
    ctx: CommandContext,
    conn: Connection,
    kind: TabularKind,
    *,
    warehouse_id: uuid.UUID,
    namespace: Namespace,
    namespace_id: uuid.UUID,
    name: str,
    tabular_id: uuid.UUID,
) -> None:
    """Check that a new tabular's name is free in the namespace's one name space, and its id unused.

    Raises:
        AlreadyExistsError: a table or view by that name (any case), or one of this kind with that id, exists.
    """
    await require_name_free(ctx, conn, warehouse_id, namespace, namespace_id, name, taken=kind.name_taken)
    if await kind.id_taken(ctx.state, conn, tabular_id):
        raise AlreadyExistsError(f"A {kind.name} with uuid {tabular_id} already exists")


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
    """`claim_name` and `claim_location` of a new table in one round trip (they run under the write lock).

    Raises:
        AlreadyExistsError: a table or view by that name (any case) or a table with that id exists.
        InvalidLocationError: the location is outside the warehouse or overlaps another table.
    """
    conflict = await ctx.state.table_claim_conflict(conn, warehouse.id, namespace_id, name, table_id, location)
    if conflict == "name":
        raise TABLE.name_taken(namespace, name, await name_holder(ctx, conn, warehouse.id, namespace, name))
    if conflict == "id":
        raise AlreadyExistsError(f"A table with uuid {table_id} already exists")
    require_inside_warehouse(location, warehouse.location, warehouse.alternative_schemes)
    if conflict == "location":
        raise InvalidLocationError(_location_taken(location))


async def claim_new_tabular(
    ctx: CommandContext,
    conn: Connection,
    kind: TabularKind,
    *,
    warehouse: WarehouseRow,
    namespace: Namespace,
    namespace_id: uuid.UUID,
    name: str,
    location: str,
    tabular_id: uuid.UUID,
) -> None:
    """The claims of a new tabular of `kind`: its name and id, and, where the kind claims one, its location.

    Raises:
        AlreadyExistsError: a table or view by that name (any case), or one of this kind with that id, exists.
        InvalidLocationError: (a table) the location is outside the warehouse or overlaps another table.
    """
    if kind.claims_location:
        await claim_name_and_location(
            ctx,
            conn,
            warehouse=warehouse,
            namespace=namespace,
            namespace_id=namespace_id,
            name=name,
            location=location,
            table_id=tabular_id,
        )
        return
    await claim_name(
        ctx,
        conn,
        kind,
        warehouse_id=warehouse.id,
        namespace=namespace,
        namespace_id=namespace_id,
        name=name,
        tabular_id=tabular_id,
    )


def _location_taken(location: str) -> str:
    """Lakekeeper's wording first (its Spark tests look for it), then which location and why."""
    return f"Location is already taken by another table or view: {location} overlaps the location of another table"


async def claim_location(
    ctx: CommandContext, conn: Connection, *, warehouse: WarehouseRow, location: str, table_id: uuid.UUID
) -> None:
    """Raises: InvalidLocationError, when outside the warehouse or overlapping another table."""
    require_inside_warehouse(location, warehouse.location, warehouse.alternative_schemes)
    if await ctx.state.location_taken(conn, warehouse.id, location, except_table=table_id):
        raise InvalidLocationError(_location_taken(location))


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


async def current_table(
    ctx: CommandContext, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
) -> TabularRow | None:
    """The table as the read model holds it, for a commit: its document from `ctx.documents` when kept there (a hot
    table's commit then reads and decodes no O(history) column), else from the row, read whole."""
    head = await ctx.state.table_head(conn, warehouse_id, namespace, name)
    if head is None:
        return None
    document = ctx.documents.document(head.metadata_location)
    if document is not None:
        return head.with_document(document)
    return await ctx.state.table(conn, warehouse_id, namespace, name)


async def require_metadata_file(ctx: CommandContext, storage: WarehouseStorage, metadata_location: str) -> None:
    """The current metadata file must still be in storage: the log keeps its document, but a table whose file
    was deleted behind the catalog's back is not served from the log as if nothing happened (Iceberg Java's
    catalogs fail to read it; Iceberg 1.11's kit expects loadTable to fail so).

    Raises:
        MetadataFileNotFoundError: (404 NotFoundException) storage says the file is not there.
    """
    if await ctx.presence.missing(storage, metadata_location):
        raise MetadataFileNotFoundError(f"Failed to open input stream for file: {metadata_location}")


async def claim_moved_location(
    ctx: CommandContext,
    storage: WarehouseStorage,
    *,
    warehouse: WarehouseRow,
    table_id: uuid.UUID,
    metadata_location: str,
    document: Json,
) -> None:
    """`set-location`'s claim: a new table's rules, except that the files the committed metadata references
    (and their Hadoop checksum sidecars) may lie there already.

    A replace transaction with a new location (Java's `replaceTransaction()` with an append, Spark's CREATE OR
    REPLACE … LOCATION … AS SELECT) writes its data, manifests and manifest list below the new location before
    it commits. Only manifest lists and manifests there are read (as a purge reads them), so a file counts as the
    client's own only when it was named from inside the location, where the client evidently writes. Anything
    else there is someone else's, which a purge of this table must never reach.

    Raises:
        InvalidLocationError: outside the warehouse, overlapping another table, or holding other files.
    """
    location = str(document["location"])
    async with ctx.store.connection() as conn:
        await claim_location(ctx, conn, warehouse=warehouse, location=location, table_id=table_id)
    if await off_loop(storage.is_empty, location):
        return
    foreign = await off_loop(storage.foreign_files, location, metadata_location, document)
    if foreign:
        raise InvalidLocationError(
            f"Table location {location} is not empty: {len(foreign)} file(s) there are not this commit's"
        )


_WRITTEN_ON_THE_LOOP = 256 * 1024
"""The largest local metadata file (bytes) written on the event loop."""


async def _write_metadata(storage: WarehouseStorage, location: str, document: Json | bytes) -> None:
    """A local warehouse's metadata file is written on the loop, an object store's in a worker thread.

    Locally it is one small file handed to the page cache (its path resolved, one `open` and `write`), which costs
    less than the worker-thread hop around it: about a tenth of a commit's server CPU went to that hop on a busy
    machine (its futures, both threads' wake-ups, the GIL changing hands). As for the presence check
    (commands/file_presence.py), a local warehouse on a disk that hangs would stall the loop. A large file (a long
    history's, megabytes; compressed maybe) or one still to encode goes to a worker thread, as before.
    """
    if storage.local and isinstance(document, bytes) and len(document) <= _WRITTEN_ON_THE_LOOP:
        storage.write_metadata(location, document)
    else:
        await off_loop(storage.write_metadata, location, document)


@asynccontextmanager
async def metadata_written(
    ctx: CommandContext,
    storage: WarehouseStorage,
    metadata_location: str,
    document: Json | bytes,
    event_metadata: EventMetadata,
    *,
    serialised: bool = True,
) -> AsyncIterator[Transaction]:
    """Write the metadata file first (no lock held during IO), then open the append transaction.

    `document` may be given already encoded (a commit encodes once for the file, its digest and the read model).
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
    files: Sequence[tuple[str, Json | bytes]],
    event_metadata: EventMetadata,
    *,
    serialised: bool = True,
) -> AsyncIterator[Transaction]:
    """`metadata_written` for several files: all are written before, and deleted unless, the commit.

    On failure the directories the writes created (`metadata/`, a new table's location) go too when left
    empty, best effort. A crash between write and commit can still leave a metadata file no event names; it
    lies inside the table's own location, where nothing reads it. So the files also stay when the connection
    was lost while committing: the events naming them may be in the log (`Transaction.may_have_committed`).
    """
    attempted: list[str] = []
    written: list[str] = []
    tx: Transaction | None = None
    try:
        for location, document in files:
            attempted.append(location)
            await _write_metadata(storage, location, document)
            written.append(location)
        async with ctx.store.transaction(event_metadata, serialised=serialised) as tx:
            yield tx
    except BaseException as failure:
        if tx is not None and tx.may_have_committed(failure):
            raise  # the log may name these files now: deleting them would break the table (issue 29)
        for location in attempted:
            with suppress(Exception):
                if location in written:
                    await off_loop(storage.delete_file, location)
                await off_loop(storage.remove_empty_parents, location)
        raise
