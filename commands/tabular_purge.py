"""The `tabular_purge` queue: delete a dropped table's files, a bounded number at a time, resumable after a crash.

The payload names the table and its last metadata location; the metadata document itself is read back from the
log (the event that recorded that location). The first attempt records the plan (every file, in
`WarehouseStorage.purge_plan` order) as the task's progress and advances an index after each batch, so an
attempt after a crash resumes where the last one stopped: at most one batch is deleted twice, and deleting a
file already gone is harmless.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import msgspec

from catalog_es.soft_delete import DeletedTabularRow
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.storage.files import WarehouseStorage
from catalog_es.store.logged_documents import recorded_metadata
from catalog_es.store.task_queue import Task
from commands.context import CommandContext, off_loop
from commands.task_handlers import TABULAR_PURGE, TaskHandler, TaskLostError
from commands.tasks import NewTask, record_progress, task_progress


class TabularPurgePayload(msgspec.Struct, frozen=True, rename="kebab"):
    """What a purge needs: the table's location and the metadata file that was current when it was dropped."""

    table_id: uuid.UUID
    location: str
    metadata_location: str


def purge_task(
    warehouse_id: uuid.UUID, row: TabularRow | DeletedTabularRow, *, due_at_ms: int | None = None
) -> NewTask:
    """The task that purges a dropped table's files (now, or at `due_at_ms` for an expiring soft deletion)."""
    payload = TabularPurgePayload(table_id=row.id, location=row.location, metadata_location=row.metadata_location)
    return NewTask(
        queue=TABULAR_PURGE,
        warehouse_id=warehouse_id,
        entity_type="table",
        entity_id=row.id,
        payload=msgspec.to_builtins(payload),
        due_at_ms=due_at_ms,
    )


def tabular_purge_handler(concurrency: int = 8, batch_size: int = 64) -> TaskHandler:
    """A handler deleting `batch_size` files per progress record, `concurrency` of them at once."""

    async def handle(task: Task, ctx: CommandContext) -> dict[str, Any]:
        payload = msgspec.convert(task.payload, TabularPurgePayload)
        storage = await ctx.storage(await _warehouse(ctx, task.warehouse_id))
        progress = await task_progress(ctx, task) or {}
        files: list[str] = progress.get("files") or await _plan(ctx, storage, payload)
        start = int(progress.get("done", 0))
        if "files" not in progress and not await record_progress(ctx, task, {"files": files, "done": 0}):
            raise TaskLostError
        limit = asyncio.Semaphore(max(1, concurrency))

        async def delete(path: str) -> bool:
            async with limit:
                return await off_loop(storage.delete_quietly, path)

        deleted = 0
        for begin in range(start, len(files), max(1, batch_size)):
            batch = files[begin : begin + max(1, batch_size)]
            deleted += sum(await asyncio.gather(*(delete(path) for path in batch)))
            if not await record_progress(ctx, task, {"files": files, "done": begin + len(batch)}):
                raise TaskLostError
        await off_loop(storage.finish_purge, payload.location)
        return {"files": len(files), "deleted": deleted, "resumed-at": start}

    return handle


async def _warehouse(ctx: CommandContext, warehouse_id: uuid.UUID) -> WarehouseRow:
    """The warehouse, active or not: a deactivated warehouse's dropped tables are still purged."""
    async with ctx.store.connection() as conn:
        row = await ctx.state.warehouse_by_id(conn, warehouse_id)
    if row is None:
        raise LookupError(f"Warehouse {warehouse_id} is gone: nothing left to purge with")
    return row


async def _plan(ctx: CommandContext, storage: WarehouseStorage, payload: TabularPurgePayload) -> list[str]:
    async with ctx.store.connection() as conn:
        metadata = await recorded_metadata(conn, f"table-{payload.table_id}", payload.metadata_location)
    if metadata is None:  # registered before the log kept documents, say: only the pointer is known
        return [payload.metadata_location]
    return await off_loop(storage.purge_plan, payload.location, payload.metadata_location, metadata)
