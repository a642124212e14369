"""The `metadata_cleanup` queue: delete the previous metadata files a commit dropped from its table's metadata log.

Scheduled in the commit's own transaction (see `catalog_es.metadata.retention`), run by the task worker. A file
some table (live or soft-dropped, this one included) still points at or logs is kept: a registered table may have
adopted it. As-of reads are served from the log, never from these files; restoring a pointer checks that its file
still exists.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from catalog_es.store.task_queue import Task
from commands.context import CommandContext, off_loop
from commands.task_handlers import METADATA_CLEANUP
from commands.tasks import NewTask

# A table's metadata log is rows of `table_document_entries`, live or soft-dropped (keyed by the table's id).
_REFERENCED = (
    "SELECT f FROM unnest(%s::text[]) AS f WHERE EXISTS (SELECT 1 FROM tables t WHERE t.metadata_location = f)"
    " OR EXISTS (SELECT 1 FROM deleted_tabulars d WHERE d.metadata_location = f)"
    " OR EXISTS (SELECT 1 FROM table_document_entries e"
    " WHERE e.list = 'metadata-log' AND e.entry::jsonb @> jsonb_build_object('metadata-file', f))"
)


class MetadataCleanupPayload(msgspec.Struct, frozen=True, rename="kebab"):
    table_id: uuid.UUID
    files: list[str]


def cleanup_task(warehouse_id: uuid.UUID, table_id: uuid.UUID, files: list[str]) -> NewTask:
    """The task deleting `files`, dropped from the metadata log of `table_id` by a commit."""
    payload = MetadataCleanupPayload(table_id=table_id, files=files)
    return NewTask(
        queue=METADATA_CLEANUP,
        warehouse_id=warehouse_id,
        entity_type="table",
        entity_id=table_id,
        payload=msgspec.to_builtins(payload),
    )


async def clean_up_metadata_files(task: Task, ctx: CommandContext) -> dict[str, Any]:
    """Delete the task's files that no table refers to any more (idempotent: a file gone already is skipped)."""
    payload = msgspec.convert(task.payload, MetadataCleanupPayload)
    async with ctx.store.connection() as conn:
        warehouse = await ctx.state.warehouse_by_id(conn, task.warehouse_id)
        cursor = await conn.execute(_REFERENCED, (payload.files,))
        referenced = {str(row[0]) for row in await cursor.fetchall()}
    if warehouse is None:
        return {"deleted": 0, "kept": len(payload.files)}
    storage = await ctx.storage(warehouse)
    deleted = [
        path for path in payload.files if path not in referenced and await off_loop(storage.delete_quietly, path)
    ]
    return {"deleted": len(deleted), "kept": len(payload.files) - len(deleted)}
