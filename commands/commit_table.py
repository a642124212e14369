"""Commit to a table: requirements checked and updates applied by pyiceberg, then compare-and-swap."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import CommitFailedError, NoSuchTableError
from catalog_es.events import Json, TableCommitted, TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.encoded_document import EncodedDocument, encode_document
from catalog_es.metadata.rebase import rebase_enabled
from catalog_es.metadata.retention import removed_metadata_files
from catalog_es.metadata.table_changes import digest_of, records_whole_document
from catalog_es.metadata.tables import commit, decide_commit, metadata_to_json, next_metadata_location
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError, Transaction
from commands.commit_rebased import RebasableChange, commit_rebased
from commands.context import CommandContext
from commands.metadata_cleanup import cleanup_task
from commands.tabulars import (
    TabularResult,
    claim_location,
    claim_moved_location,
    claim_name_and_location,
    current_table,
    metadata_written,
    require_metadata_file,
)
from commands.tasks import schedule_task


class CommitTable(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    namespace: Namespace
    name: str
    requirements: list[Json]
    updates: list[Json]
    metadata: EventMetadata


def _creates(cmd: CommitTable) -> bool:
    return any(requirement.get("type") == "assert-create" for requirement in cmd.requirements)


async def handle_commit_table(cmd: CommitTable, ctx: CommandContext) -> TabularResult:
    """Commit, or create the table when the commit asserts it does not exist yet (staged create).

    Raises:
        NoSuchTableError: the table does not exist and the commit does not create it.
        NoSuchNamespaceError: creating in a namespace that does not exist.
        CommitFailedError: a requirement failed or a concurrent commit won (409).
        BadRequestError: an update is unknown or invalid.
        InvalidLocationError: a new location is outside the warehouse or taken.
        MetadataFileNotFoundError: the table's current metadata file is gone from storage (404).
    """
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    async with ctx.store.connection() as conn:
        current = await current_table(ctx, conn, cmd.warehouse_id, cmd.namespace, cmd.name)
    if current is None:
        if not _creates(cmd):
            raise NoSuchTableError(f"Table does not exist: {cmd.namespace}.{cmd.name}")
        return await _create(cmd, ctx, warehouse)
    return await _commit(cmd, ctx, warehouse, current)


class PreparedCommit(msgspec.Struct, frozen=True):
    """A decided commit to an existing table, ready to be written and appended."""

    current: TabularRow
    requirements: list[Json]
    updates: list[Json]
    location_changed: bool
    metadata_location: str
    document: Json
    encoded: bytes  # the document's canonical JSON: its metadata file, the read model's copy, its digest's input
    applied_at_ms: int
    assigned_ids: dict[str, int]
    whole: bool  # the event records the document itself (see `records_whole_document`)
    removed_files: list[str]  # previous metadata files to delete after the commit (see `removed_metadata_files`)

    def event(self) -> TableCommitted:
        return TableCommitted(
            table_id=self.current.id,
            warehouse_id=self.current.warehouse_id,
            requirements=self.requirements,
            updates=self.updates,
            previous_metadata_location=self.current.metadata_location,
            metadata_location=self.metadata_location,
            applied_at_ms=self.applied_at_ms,
            metadata_sha256=digest_of(self.encoded),
            assigned_ids=self.assigned_ids,
            metadata=self.document if self.whole else None,
        )


def encode_after(base: Json, base_encoded: EncodedDocument | None, document: Json) -> EncodedDocument:
    """The commit's canonical JSON (its metadata file, the read model's copy, its digest's input), spliced from the
    base's when kept: the bytes `encode_metadata` would give."""
    return encode_document(document, base, base_encoded)


def prepare_commit(
    current: TabularRow,
    requirements: list[Json],
    updates: list[Json],
    now_ms: int,
    documents: MetadataDocuments,
) -> PreparedCommit | None:
    """Decide a commit to `current`; None when it changes nothing.

    The base comes parsed from `documents` and the result is kept there under its new location (written or not,
    a location is used once), so the table's next commit reads and parses nothing. The document is encoded once,
    spliced from its base's JSON when that is kept (`encode_after`).

    Raises:
        CommitFailedError: a requirement does not hold.
        BadRequestError: an update is unknown or invalid.
    """
    base = documents.parse(current.metadata_location, current.metadata)
    updated, assigned_ids = decide_commit(base, current.metadata_location, requirements, updates, now_ms=now_ms)
    if updated == base:
        return None
    metadata_location = next_metadata_location(updated, current.metadata_location)
    document = document_after(base, current.metadata, updated)
    encoded = encode_after(current.metadata, documents.encoded(current.metadata_location, current.metadata), document)
    documents.remember(metadata_location, document, updated, encoded)
    return PreparedCommit(
        current=current,
        requirements=requirements,
        updates=updates,
        location_changed=updated.location != base.location,
        metadata_location=metadata_location,
        document=document,
        encoded=encoded.encoded,
        applied_at_ms=now_ms,
        assigned_ids=assigned_ids,
        whole=records_whole_document(base, updated),
        removed_files=removed_metadata_files(base, updated),
    )


async def append_commit(
    ctx: CommandContext, tx: Transaction, warehouse: WarehouseRow, prepared: PreparedCommit
) -> None:
    """Append the commit if the table is still at the version it was decided on.

    Raises:
        StreamVersionConflictError: a concurrent commit won.
        InvalidLocationError: a new location is outside the warehouse or taken.
    """
    if prepared.location_changed:
        location = prepared.document["location"]
        await claim_location(ctx, tx.conn, warehouse=warehouse, location=location, table_id=prepared.current.id)
    await tx.append(
        prepared.event(),
        expected_version=prepared.current.version,
        document=prepared.document,
        encoded=prepared.encoded,
    )
    if prepared.removed_files:
        await schedule_task(tx, ctx, cleanup_task(warehouse.id, prepared.current.id, prepared.removed_files))


async def _commit(cmd: CommitTable, ctx: CommandContext, warehouse: WarehouseRow, current: TabularRow) -> TabularResult:
    mode = warehouse.server_side_rebase or ctx.server_side_rebase  # the warehouse's own mode, else the server's
    rebase = rebase_enabled(mode, current.metadata.get("properties") or {})
    storage = await ctx.storage(warehouse)
    await require_metadata_file(ctx, storage, current.metadata_location)  # as loadTable: not committed on as if present
    try:
        prepared = prepare_commit(current, cmd.requirements, cmd.updates, ctx.now_ms(), ctx.documents)
    except CommitFailedError as failure:
        if not rebase:
            raise
        return await commit_rebased(ctx, warehouse, _change(cmd), current, failure, reload=False)
    if prepared is None:
        return TabularResult(metadata_location=current.metadata_location, metadata=current.metadata)
    if prepared.location_changed:  # checked before the metadata file is written below the new location
        await claim_moved_location(
            ctx,
            storage,
            warehouse=warehouse,
            table_id=current.id,
            metadata_location=prepared.metadata_location,
            document=prepared.document,
        )
    # Only a moved table needs the location check serialised with other writers; otherwise the
    # (stream, version) key alone decides, and the counter row is locked just for the append.
    written = metadata_written(
        ctx, storage, prepared.metadata_location, prepared.encoded, cmd.metadata, serialised=prepared.location_changed
    )
    try:
        async with written as tx:
            await append_commit(ctx, tx, warehouse, prepared)
    except StreamVersionConflictError:
        lost = CommitFailedError(f"Table {cmd.namespace}.{cmd.name} was changed concurrently")
        if not rebase or prepared.location_changed:
            raise lost from None
    else:
        return TabularResult(prepared.metadata_location, prepared.document, prepared.encoded)
    return await commit_rebased(ctx, warehouse, _change(cmd), current, lost, reload=True)


def _change(cmd: CommitTable) -> RebasableChange:
    return RebasableChange(cmd.namespace, cmd.name, cmd.requirements, cmd.updates, cmd.metadata)


async def _create(cmd: CommitTable, ctx: CommandContext, warehouse: WarehouseRow) -> TabularResult:
    created = commit(None, None, cmd.requirements, cmd.updates, now_ms=ctx.now_ms())
    metadata_location = next_metadata_location(created, None)
    document = metadata_to_json(created)
    table_id = created.table_uuid
    storage = await ctx.storage(warehouse)
    # Emptiness was checked when the create was staged: the client has written its data files there since.
    async with ctx.store.connection() as conn:
        await claim_location(ctx, conn, warehouse=warehouse, location=created.location, table_id=table_id)
    async with metadata_written(ctx, storage, metadata_location, document, cmd.metadata) as tx:
        namespace = await ctx.existing_namespace(tx.conn, warehouse.id, cmd.namespace)
        await claim_name_and_location(
            ctx,
            tx.conn,
            warehouse=warehouse,
            namespace=cmd.namespace,
            namespace_id=namespace.id,
            name=cmd.name,
            location=created.location,
            table_id=table_id,
        )
        event = TableCreated(
            table_id=table_id,
            warehouse_id=warehouse.id,
            namespace_id=namespace.id,
            name=cmd.name,
            metadata_location=metadata_location,
            metadata=document,
            updates=cmd.updates,
        )
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))
    return TabularResult(metadata_location=metadata_location, metadata=document)
