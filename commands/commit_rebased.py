"""A table commit the server rebases onto its branch's current head (issue 19), retrying lost races."""

from __future__ import annotations

import asyncio
import uuid
import weakref
from dataclasses import dataclass

from catalog_es.errors import CommitFailedError
from catalog_es.events import CommitRebase, Json, TableCommitted
from catalog_es.identifiers import Namespace
from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.rebase import plan_rebase
from catalog_es.metadata.retention import removed_metadata_files
from catalog_es.metadata.table_changes import digest_of, encode_metadata, records_whole_document
from catalog_es.metadata.tables import decide_commit, next_metadata_location
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.rebase_files import delete_manifest_lists, rebase_commit
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError, Transaction
from commands.context import CommandContext, off_loop
from commands.metadata_cleanup import cleanup_task
from commands.tabulars import TabularResult, current_table, metadata_written
from commands.tasks import schedule_task

# Each lost race means another commit landed, so the table makes progress; the bound only keeps one
# request from circling forever behind a stream of faster writers.
_ATTEMPTS = 64
# Rebases of one table in this process take turns: racing each other, all but one would redo their IO.
_TABLE_TURNS: weakref.WeakValueDictionary[uuid.UUID, asyncio.Lock] = weakref.WeakValueDictionary()


@dataclass(frozen=True)
class RebasableChange:
    """The client's change to one table, as it asked for it."""

    namespace: Namespace
    name: str
    requirements: list[Json]
    updates: list[Json]
    metadata: EventMetadata


@dataclass(frozen=True)
class _Decided:
    event: TableCommitted
    document: Json  # the metadata the event results in
    encoded: bytes  # its canonical JSON, encoded once: the metadata file, the read model's copy, the digest's input
    manifest_lists: list[str]
    removed_files: list[str]  # previous metadata files to delete after the commit


async def commit_rebased(
    ctx: CommandContext,
    warehouse: WarehouseRow,
    change: RebasableChange,
    known: TabularRow,
    failure: CommitFailedError,
    *,
    reload: bool,
) -> TabularResult:
    """Commit `change` on the table as it is now, rebased if its branch moved since the client's base.

    `known` is the table as last read (read again first with `reload`: a concurrent commit won against it);
    a table dropped and created again under the name since is not this one.

    Raises:
        CommitFailedError: the change does not commute with what landed since its base (the reference
            wording for the table as it is now), or it lost `_ATTEMPTS` races in a row.
    """
    turn = _TABLE_TURNS.get(known.id)
    if turn is None:
        turn = _TABLE_TURNS[known.id] = asyncio.Lock()
    waited = turn.locked()  # then the table has most likely moved on while this request waited
    async with turn:
        return await _commit_rebased(ctx, warehouse, change, known, failure, reload=reload or waited)


async def _commit_rebased(
    ctx: CommandContext,
    warehouse: WarehouseRow,
    change: RebasableChange,
    known: TabularRow,
    failure: CommitFailedError,
    *,
    reload: bool,
) -> TabularResult:
    storage = await ctx.storage(warehouse)
    current: TabularRow | None = None if reload else known
    for attempt in range(1, _ATTEMPTS + 1):
        if current is None:
            async with ctx.store.connection() as conn:
                current = await current_table(ctx, conn, warehouse.id, change.namespace, change.name)
            if current is None or current.id != known.id:
                raise failure
        decided = await _decide(ctx, storage, current, change, attempt)
        if decided is None:
            return TabularResult(metadata_location=current.metadata_location, metadata=current.metadata)
        event = decided.event
        tx: Transaction | None = None
        try:
            async with metadata_written(
                ctx, storage, event.metadata_location, decided.encoded, change.metadata, serialised=False
            ) as tx:
                await tx.append(
                    event, expected_version=current.version, document=decided.document, encoded=decided.encoded
                )
                if decided.removed_files:
                    await schedule_task(tx, ctx, cleanup_task(warehouse.id, current.id, decided.removed_files))
        except StreamVersionConflictError:
            await off_loop(delete_manifest_lists, storage, decided.manifest_lists)
            current = None
            continue
        except BaseException as error:
            if tx is None or not tx.may_have_committed(error):  # else the committed metadata may name them
                await off_loop(delete_manifest_lists, storage, decided.manifest_lists)
            raise
        return TabularResult(event.metadata_location, decided.document, decided.encoded)
    raise CommitFailedError(f"Table {change.namespace}.{change.name} was changed concurrently")


async def _decide(
    ctx: CommandContext, storage: WarehouseStorage, current: TabularRow, change: RebasableChange, attempt: int
) -> _Decided | None:
    """The event for `change` on `current`: as asked when its requirements hold, else rebased; None: no change.

    Raises:
        CommitFailedError: a requirement fails and the change cannot be rebased.
    """
    base = ctx.documents.parse(current.metadata_location, current.metadata)
    now_ms = ctx.now_ms()
    try:
        updated, assigned_ids = decide_commit(
            base, current.metadata_location, change.requirements, change.updates, now_ms=now_ms
        )
        requirements, updates, rebased, lists = change.requirements, change.updates, None, []
    except CommitFailedError as failure:
        plan = plan_rebase(base, change.requirements, change.updates)
        if plan is None:
            raise
        result = await off_loop(rebase_commit, storage, base, plan, ctx.ids.new_id(), attempt, now_ms)
        if result is None:
            raise failure from None
        requirements, updates, lists = result.requirements, result.updates, result.manifest_lists
        rebased = CommitRebase(
            ref=plan.ref, original_base_snapshot_id=plan.original_base, new_parent_snapshot_id=plan.head.snapshot_id
        )
        try:
            updated, assigned_ids = decide_commit(base, current.metadata_location, requirements, updates, now_ms=now_ms)
        except BaseException:
            await off_loop(delete_manifest_lists, storage, lists)
            raise
    if updated == base:
        return None
    if updated.location != base.location:  # a moved table is never rebased: its location was not claimed here
        await off_loop(delete_manifest_lists, storage, lists)
        raise CommitFailedError(f"Table {change.namespace}.{change.name} was changed concurrently")
    document = document_after(base, current.metadata, updated)
    encoded = encode_metadata(document)
    event = TableCommitted(
        table_id=current.id,
        warehouse_id=current.warehouse_id,
        requirements=requirements,
        updates=updates,
        previous_metadata_location=current.metadata_location,
        metadata_location=next_metadata_location(updated, current.metadata_location),
        applied_at_ms=now_ms,
        metadata_sha256=digest_of(encoded),
        assigned_ids=assigned_ids,
        metadata=document if records_whole_document(base, updated) else None,
        rebased=rebased,
    )
    ctx.documents.remember(event.metadata_location, document, updated)
    removed = removed_metadata_files(base, updated)
    return _Decided(event=event, document=document, encoded=encoded, manifest_lists=lists, removed_files=removed)
