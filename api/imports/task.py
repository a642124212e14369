"""Queue `catalog_import`'s handler: the same import as `catalog-es import`, its progress kept for the console.

The source's properties are opened from the secrets store only inside the attempt (never logged, never in an
event or a progress record) and the sealed row is deleted once the task can run no more. An attempt after a
crash plans again, so it goes on where the last one stopped. A failure's message is its first line with every property
value blotted out, in case the source catalog's error repeated a credential or quoted a file it read.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
from pyiceberg.catalog import load_catalog

from api.imports.catalog import Action, Source, apply, plan, read_source, uncovered
from catalog_es.store.secrets import SecretNotFoundError
from catalog_es.store.task_queue import Task
from commands.catalog_import import ImportPayload
from commands.context import CommandContext
from commands.task_handlers import TaskHandler, TaskLostError, TaskRefusedError
from commands.tasks import record_progress

MAX_LISTED = 1000  # uncovered locations kept in the progress record (the count is always exact)
_MESSAGE_CHARS = 500  # of a failure's first line: validation errors quote what they read on later lines
_SHORTEST_BLOTTED = 4  # shorter values (`type=sql`) say nothing secret and are words of ordinary messages


class ImportFailedError(Exception):
    """A failed attempt, its message free of the source's property values."""


class _Progress:
    """The progress record of one attempt, written at most every `interval` seconds (and at each phase)."""

    def __init__(self, ctx: CommandContext, task: Task, source: str, interval: float = 0.5) -> None:
        self.ctx, self.task, self.interval, self.last = ctx, task, interval, 0.0
        self.record: dict[str, Any] = {"source": source, "phase": "reading", "done": 0, "total": 0, "counts": {}}

    async def save(self, *, force: bool = True, **fields: Any) -> None:
        self.record.update(fields)
        if not force and time.monotonic() - self.last < self.interval:
            return
        self.last = time.monotonic()
        if not await record_progress(self.ctx, self.task, self.record):
            raise TaskLostError


def _blotted(message: str, properties: dict[str, str]) -> str:
    secret_or_not = (value for key, value in properties.items() if key != "type")  # a type is one of pyiceberg's
    for value in sorted(secret_or_not, key=len, reverse=True):
        if len(value) >= _SHORTEST_BLOTTED:
            message = message.replace(value, "***")
    return message


async def _sealed_properties(ctx: CommandContext, payload: ImportPayload) -> dict[str, str]:
    if ctx.secrets is None:
        raise TaskRefusedError("This worker has no secrets key: it cannot open the source's properties")
    try:
        async with ctx.store.connection() as conn:
            document = await ctx.secrets.get(conn, payload.secret_id)
    except SecretNotFoundError:
        raise TaskRefusedError("The source's properties are gone (the import ended before)") from None
    return msgspec.convert(document, dict[str, str])


async def _forget(ctx: CommandContext, payload: ImportPayload) -> None:
    if ctx.secrets is not None:
        async with ctx.store.connection() as conn:
            await ctx.secrets.delete(conn, payload.secret_id)


async def _run(task: Task, ctx: CommandContext, payload: ImportPayload, properties: dict[str, str]) -> dict[str, Any]:
    progress = _Progress(ctx, task, payload.source)
    await progress.save()
    only = [tuple(parts) for parts in payload.namespaces]
    found: Source = await asyncio.to_thread(
        lambda: read_source(load_catalog(payload.catalog_name, **properties), payload.source, only)
    )
    missing = uncovered(found, await ctx.warehouse(task.warehouse_id))
    if missing:
        await progress.save(phase="refused", uncovered=missing[:MAX_LISTED], uncovered_count=len(missing))
        raise TaskRefusedError(
            f"The warehouse does not cover {len(missing)} location(s) of the source, e.g. {missing[0]}:"
            " nothing was imported"
        )
    actions = await plan(ctx, task.warehouse_id, found)
    counts: dict[str, int] = {}
    await progress.save(phase="importing", total=len(actions))

    def counted(action: Action) -> None:
        counts[action.kind] = counts.get(action.kind, 0) + 1

    for index, action in enumerate(actions, 1):
        await apply(ctx, task.warehouse_id, payload.source, [action], actor=payload.actor, done=counted)
        await progress.save(force=index == len(actions), done=index, counts=counts)
    unchanged = len(found.namespaces) + len(found.tabulars) - len(actions)
    return {"source": payload.source, "counts": counts, "unchanged": unchanged, "views-readable": found.views_readable}


async def import_catalog(task: Task, ctx: CommandContext) -> dict[str, Any]:
    """Run one attempt of an import; the summary recorded when it succeeds.

    Raises:
        TaskRefusedError: the warehouse does not cover the source (nothing written), or its properties are gone.
        ImportFailedError: anything else (retried; the sealed properties are deleted after the last attempt).
    """
    payload = msgspec.convert(task.payload, ImportPayload)
    properties = await _sealed_properties(ctx, payload)
    try:
        result = await _run(task, ctx, payload, properties)
    except (TaskLostError, asyncio.CancelledError):
        raise  # another worker may go on with it: the properties stay
    except TaskRefusedError:
        await _forget(ctx, payload)
        raise
    except Exception as exc:
        if task.attempt >= task.max_attempts:
            await _forget(ctx, payload)
        first_line = (str(exc).strip().splitlines() or [""])[0][:_MESSAGE_CHARS]  # no quoted input after it
        message = _blotted(f"{type(exc).__name__}: {first_line}", properties)
        raise ImportFailedError(message) from None
    await _forget(ctx, payload)
    return result


def catalog_import_handler() -> TaskHandler:
    """The handler of queue `catalog_import` (registered by the composition root)."""
    return import_catalog
