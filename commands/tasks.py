"""The task queue's commands (issue 17 §3): schedule inside a command, claim, renew, complete, fail, cancel.

Every change of a task's state is an event on the task's own stream (who scheduled it, when it ran, how it
ended); the queue rows follow inline (`projections/tasks.py`). Claims lock with `FOR UPDATE SKIP LOCKED`, so
several workers share a queue without taking the same task; a lease that runs out (a crashed worker) makes the
task claimable again: delivery is at least once, so handlers are idempotent.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import msgspec

from catalog_es.clock import millis
from catalog_es.errors import NoSuchTaskError, TaskFinishedError
from catalog_es.events.tasks import (
    TaskCancelled,
    TaskFailed,
    TaskQueueConfigured,
    TaskRescheduled,
    TaskScheduled,
    TaskStarted,
    TaskSucceeded,
)
from catalog_es.store.eventstore import EventMetadata, Transaction
from catalog_es.store.task_queue import (
    FINISHED,
    Task,
    extend_lease,
    hold_lease,
    holds_lease,
    lease_live,
    load_progress,
    locked_task,
    next_due,
    release_lease,
    save_progress,
)
from commands.context import CommandContext

WORKER_METADATA = EventMetadata(actor="system")  # what workers record their events as
BACKOFF_SECONDS = 5.0  # the first retry's delay; each further one doubles it
MAX_BACKOFF_SECONDS = 3600.0


class NewTask(msgspec.Struct, frozen=True, kw_only=True):
    """A task to schedule; `due_at_ms` None means now."""

    queue: str
    warehouse_id: uuid.UUID
    entity_type: str
    entity_id: uuid.UUID
    payload: dict[str, Any]
    due_at_ms: int | None = None
    max_attempts: int = 5


async def schedule_task(tx: Transaction, ctx: CommandContext, task: NewTask) -> uuid.UUID:
    """Put a task on its queue inside the caller's command transaction (atomic with the command's own events)."""
    task_id = ctx.ids.new_id()
    event = TaskScheduled(
        task_id=task_id,
        warehouse_id=task.warehouse_id,
        queue=task.queue,
        entity_type=task.entity_type,
        entity_id=task.entity_id,
        payload=task.payload,
        due_at_ms=ctx.now_ms() if task.due_at_ms is None else task.due_at_ms,
        max_attempts=max(1, task.max_attempts),
    )
    await tx.append(event, expected_version=0)
    return task_id


async def claim_task(ctx: CommandContext, queues: Sequence[str], worker: str, lease_seconds: float) -> Task | None:
    """Take the next due task of these queues for `lease_seconds` (renew before it runs out); None: nothing due.

    A task whose worker's lease ran out counts that attempt as failed; past its last attempt it fails for good.
    """
    while True:
        async with ctx.store.transaction(WORKER_METADATA, serialised=False) as tx:
            now = ctx.clock.now()
            task = await next_due(tx.conn, queues, now)
            if task is None:
                return None
            if task.status == "running" and await lease_live(tx.conn, task.task_id, now):
                continue  # claimed by another worker since this one's query began (`lease_live`): look again
            version = task.version
            if task.status == "running":  # its worker stopped renewing the lease: count that attempt as failed
                last = task.attempt >= task.max_attempts
                error = f"The worker's lease ran out during attempt {task.attempt}"
                lost = TaskFailed(
                    task_id=task.task_id,
                    warehouse_id=task.warehouse_id,
                    attempt=task.attempt,
                    error=error,
                    retry_at_ms=None if last else millis(now),
                )
                await tx.append(lost, expected_version=version)
                version += 1
                if last:
                    await release_lease(tx.conn, task.task_id, keep_progress=False)
                    continue
            attempt = task.attempt + 1
            started = TaskStarted(task_id=task.task_id, warehouse_id=task.warehouse_id, attempt=attempt, worker=worker)
            await tx.append(started, expected_version=version)
            await hold_lease(tx.conn, task, worker, attempt, now + timedelta(seconds=lease_seconds), now)
            return msgspec.structs.replace(task, attempt=attempt, status="running", version=version + 1, worker=worker)


async def renew_lease(ctx: CommandContext, task: Task, lease_seconds: float) -> bool:
    """Extend the lease; False when the worker lost the task (cancelled, or taken over): it should stop."""
    now = ctx.clock.now()
    async with ctx.store.connection() as conn:
        return await extend_lease(conn, task, now + timedelta(seconds=lease_seconds), now)


async def record_progress(ctx: CommandContext, task: Task, progress: dict[str, Any]) -> bool:
    """Remember how far the task got, for the attempt after a crash; False when the worker lost the task."""
    async with ctx.store.connection() as conn:
        return await save_progress(conn, task, progress)


async def task_progress(ctx: CommandContext, task: Task) -> dict[str, Any] | None:
    """What an earlier attempt recorded with `record_progress` (None: nothing)."""
    async with ctx.store.connection() as conn:
        return await load_progress(conn, task.task_id)


async def complete_task(ctx: CommandContext, task: Task, result: dict[str, Any]) -> bool:
    """Record success; False (nothing recorded) when the worker no longer held the task."""
    async with ctx.store.transaction(WORKER_METADATA, serialised=False) as tx:
        current = await _held(tx, task)
        if current is None:
            return False
        done = TaskSucceeded(task_id=task.task_id, warehouse_id=task.warehouse_id, attempt=task.attempt, result=result)
        await tx.append(done, expected_version=current.version)
        await release_lease(tx.conn, task.task_id, keep_progress=False)
        return True


async def fail_task(
    ctx: CommandContext, task: Task, error: str, *, backoff_seconds: float = BACKOFF_SECONDS, retry: bool = True
) -> bool:
    """Record a failed attempt: due again after `backoff_seconds * 2**(attempt - 1)` (capped at an hour) while
    attempts remain, else failed for good. Without `retry`: failed for good now, its progress kept (it says why).
    False (nothing recorded) when the worker no longer held the task."""
    async with ctx.store.transaction(WORKER_METADATA, serialised=False) as tx:
        current = await _held(tx, task)
        if current is None:
            return False
        retry_at_ms: int | None = None
        if retry and task.attempt < task.max_attempts:
            delay = min(backoff_seconds * 2 ** (task.attempt - 1), MAX_BACKOFF_SECONDS)
            retry_at_ms = ctx.now_ms() + int(delay * 1000)
        failed = TaskFailed(
            task_id=task.task_id,
            warehouse_id=task.warehouse_id,
            attempt=task.attempt,
            error=error[:2000],
            retry_at_ms=retry_at_ms,
        )
        await tx.append(failed, expected_version=current.version)
        await release_lease(tx.conn, task.task_id, keep_progress=retry_at_ms is not None or not retry)
        return True


async def cancel_task(ctx: CommandContext, task_id: uuid.UUID, metadata: EventMetadata) -> None:
    """Cancel a waiting or running task (a running one's worker learns it when renewing its lease).

    Raises:
        NoSuchTaskError: no such task.
        TaskFinishedError: it already ended.
    """
    async with ctx.store.transaction(metadata, serialised=False) as tx:
        task = await _unfinished(tx, task_id)
        await tx.append(TaskCancelled(task_id=task_id, warehouse_id=task.warehouse_id), expected_version=task.version)
        await release_lease(tx.conn, task_id, keep_progress=False)


async def cancel_unless_ended(ctx: CommandContext, task_id: uuid.UUID, metadata: EventMetadata) -> bool:
    """Cancel a task a command made obsolete (an undrop's expiration); False when it had already ended.

    For a command whose own change is committed already: a task an operator cancelled or that failed for good
    has nothing left to stop, and the command must not answer as if its change had not happened.
    """
    try:
        await cancel_task(ctx, task_id, metadata)
    except TaskFinishedError:
        return False
    return True


async def reschedule_task(ctx: CommandContext, task_id: uuid.UUID, due_at_ms: int, metadata: EventMetadata) -> None:
    """Move a waiting task's due time (`run-now`: now). A running task keeps running.

    Raises:
        NoSuchTaskError: no such task.
        TaskFinishedError: it already ended.
    """
    async with ctx.store.transaction(metadata, serialised=False) as tx:
        task = await _unfinished(tx, task_id)
        if task.status != "scheduled":
            return
        event = TaskRescheduled(task_id=task_id, warehouse_id=task.warehouse_id, due_at_ms=due_at_ms)
        await tx.append(event, expected_version=task.version)


async def configure_task_queue(
    ctx: CommandContext,
    warehouse_id: uuid.UUID,
    queue: str,
    config: dict[str, Any],
    max_seconds_since_last_heartbeat: int | None,
    metadata: EventMetadata,
) -> None:
    """Record a warehouse's configuration of one queue (Lakekeeper's `task-queue/{queue}/config`).

    Raises:
        NoSuchWarehouseError, WarehouseInactiveError: not an active warehouse.
    """
    await ctx.warehouse(warehouse_id)
    event = TaskQueueConfigured(
        warehouse_id=warehouse_id,
        queue=queue,
        config=config,
        max_seconds_since_last_heartbeat=max_seconds_since_last_heartbeat,
    )
    async with ctx.store.transaction(metadata, serialised=False) as tx:
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))


async def _held(tx: Transaction, task: Task) -> Task | None:
    """The task, locked, while `task.worker` still runs this attempt of it."""
    current = await locked_task(tx.conn, task.task_id)
    if current is None or current.status != "running" or current.attempt != task.attempt:
        return None
    return current if await holds_lease(tx.conn, task) else None


async def _unfinished(tx: Transaction, task_id: uuid.UUID) -> Task:
    task = await locked_task(tx.conn, task_id)
    if task is None:
        raise NoSuchTaskError(f"Task {task_id} does not exist")
    if task.status in FINISHED:
        raise TaskFinishedError(f"Task {task_id} already ended ({task.status})")
    return task
