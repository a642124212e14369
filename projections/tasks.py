"""The task queue's inline projection: task events → `tasks`, `task_attempts`, `task_queue_configs`.

Inline, so a task scheduled by a command is in the queue when the command commits, and a claim sees every
earlier state change; rebuild and verify replay it like the catalog (the leases are not part of it: see
`catalog_es.store.task_queue`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import singledispatch

from psycopg.types.json import Jsonb

from catalog_es.events import Event
from catalog_es.events.tasks import (
    TaskCancelled,
    TaskFailed,
    TaskQueueConfigured,
    TaskRescheduled,
    TaskScheduled,
    TaskStarted,
    TaskSucceeded,
)
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent


def _instant(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


async def project_tasks(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Apply task events in order (the registry hands over only those: `TASK_EVENTS`); rebuilds use it too."""
    for recorded in events:
        await _apply(recorded.decode(), conn, recorded)


@singledispatch
async def _apply(event: Event, conn: Connection, recorded: RecordedEvent) -> None:
    return


_TOUCH = ", updated_at = %s, version = %s WHERE task_id = %s"


@_apply.register
async def _(event: TaskScheduled, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "INSERT INTO tasks (task_id, queue, warehouse_id, entity_type, entity_id, payload, status, attempt,"
        " max_attempts, due_at, created_at, updated_at, scheduled_by, version)"
        " VALUES (%s, %s, %s, %s, %s, %s, 'scheduled', 0, %s, %s, %s, %s, %s, %s)",
        (
            event.task_id,
            event.queue,
            event.warehouse_id,
            event.entity_type,
            event.entity_id,
            Jsonb(event.payload),
            event.max_attempts,
            _instant(event.due_at_ms),
            recorded.time,
            recorded.time,
            str(recorded.extensions.get("actor", "anonymous")),
            recorded.stream_version,
        ),
    )


@_apply.register
async def _(event: TaskStarted, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE tasks SET status = 'running', attempt = %s" + _TOUCH,
        (event.attempt, recorded.time, recorded.stream_version, event.task_id),
    )
    await conn.execute(
        "INSERT INTO task_attempts (task_id, attempt, worker, status, started_at) VALUES (%s, %s, %s, 'running', %s)",
        (event.task_id, event.attempt, event.worker, recorded.time),
    )


@_apply.register
async def _(event: TaskSucceeded, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE tasks SET status = 'success'" + _TOUCH, (recorded.time, recorded.stream_version, event.task_id)
    )
    await conn.execute(
        "UPDATE task_attempts SET status = 'success', ended_at = %s, result = %s WHERE task_id = %s AND attempt = %s",
        (recorded.time, Jsonb(event.result), event.task_id, event.attempt),
    )


@_apply.register
async def _(event: TaskFailed, conn: Connection, recorded: RecordedEvent) -> None:
    if event.retry_at_ms is None:
        await conn.execute(
            "UPDATE tasks SET status = 'failed', last_error = %s" + _TOUCH,
            (event.error, recorded.time, recorded.stream_version, event.task_id),
        )
    else:
        await conn.execute(
            "UPDATE tasks SET status = 'scheduled', last_error = %s, due_at = %s" + _TOUCH,
            (event.error, _instant(event.retry_at_ms), recorded.time, recorded.stream_version, event.task_id),
        )
    await conn.execute(
        "UPDATE task_attempts SET status = 'failed', ended_at = %s, message = %s WHERE task_id = %s AND attempt = %s",
        (recorded.time, event.error, event.task_id, event.attempt),
    )


@_apply.register
async def _(event: TaskCancelled, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE tasks SET status = 'cancelled'" + _TOUCH, (recorded.time, recorded.stream_version, event.task_id)
    )


@_apply.register
async def _(event: TaskRescheduled, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE tasks SET due_at = %s" + _TOUCH,
        (_instant(event.due_at_ms), recorded.time, recorded.stream_version, event.task_id),
    )


@_apply.register
async def _(event: TaskQueueConfigured, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "INSERT INTO task_queue_configs (warehouse_id, queue, config, max_seconds_since_last_heartbeat, updated_at)"
        " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (warehouse_id, queue) DO UPDATE SET config = excluded.config,"
        " max_seconds_since_last_heartbeat = excluded.max_seconds_since_last_heartbeat,"
        " updated_at = excluded.updated_at",
        (event.warehouse_id, event.queue, Jsonb(event.config), event.max_seconds_since_last_heartbeat, recorded.time),
    )
