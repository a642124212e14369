"""Commit several tables atomically (`POST /v1/{prefix}/transactions/commit`): all or nothing."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import BadRequestError, CommitFailedError, NoSuchTableError
from catalog_es.events import Json
from catalog_es.identifiers import Namespace, name_key
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError
from commands.commit_table import PreparedCommit, append_commit, prepare_commit
from commands.context import CommandContext
from commands.tabulars import claim_moved_location, current_table, metadata_files_written, require_metadata_file


class TableChange(msgspec.Struct, frozen=True):
    namespace: Namespace
    name: str
    requirements: list[Json]
    updates: list[Json]


class CommitTransaction(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    changes: list[TableChange]
    metadata: EventMetadata


async def handle_commit_transaction(cmd: CommitTransaction, ctx: CommandContext) -> None:
    """Validate every change, then commit all in one transaction (one event per table, one commit id).

    Raises:
        BadRequestError: no changes, a table named twice, or an invalid update.
        NoSuchTableError: a table does not exist.
        CommitFailedError: a requirement failed or a concurrent commit won; nothing is written then.
    """
    if not cmd.changes:
        raise BadRequestError("A transaction needs at least one table change")
    keys = [(change.namespace.key, name_key(change.name)) for change in cmd.changes]
    if len(set(keys)) != len(keys):
        raise BadRequestError("A transaction may change each table only once")
    warehouse = await ctx.warehouse(cmd.warehouse_id)
    prepared: list[PreparedCommit] = []
    async with ctx.store.connection() as conn:
        for change in cmd.changes:
            current = await current_table(ctx, conn, cmd.warehouse_id, change.namespace, change.name)
            if current is None:
                raise NoSuchTableError(f"Table does not exist: {change.namespace}.{change.name}")
            decided = prepare_commit(current, change.requirements, change.updates, ctx.now_ms(), ctx.documents)
            if decided is not None:
                prepared.append(decided)
    files: list[tuple[str, Json | bytes]] = [(commit.metadata_location, commit.encoded) for commit in prepared]
    serialised = any(commit.location_changed for commit in prepared)
    storage = await ctx.storage(warehouse)
    for commit in prepared:
        await require_metadata_file(ctx, storage, commit.current.metadata_location)
    for commit in prepared:
        if commit.location_changed:  # before any metadata file is written below a new location
            await claim_moved_location(
                ctx,
                storage,
                warehouse=warehouse,
                table_id=commit.current.id,
                metadata_location=commit.metadata_location,
                document=commit.document,
            )
    try:
        async with metadata_files_written(ctx, storage, files, cmd.metadata, serialised=serialised) as tx:
            # A fixed order (by table id) so concurrent multi-table commits never wait on each other in a cycle.
            for commit in sorted(prepared, key=lambda commit: commit.current.id):
                await append_commit(ctx, tx, warehouse, commit)
    except StreamVersionConflictError as exc:
        raise CommitFailedError(f"A table in the transaction was changed concurrently: {exc.stream_id}") from None
