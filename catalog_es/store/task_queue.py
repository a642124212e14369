"""The Postgres task queue: its tables, the `Task` a worker holds, and the SQL that claims and leases tasks.

Two kinds of state, kept apart on purpose:
- `tasks`, `task_attempts`, `task_queue_configs` are a read model projected *inline* from the task events
  (`projections/tasks.py`), so scheduling a task is atomic with the command that schedules it, and rebuild,
  verify and as-of treat the queue like any other read model;
- `task_leases` (who runs a task until when, and how far it got) is operational state, never an event: a
  heartbeat is not a fact about the catalog. A lease that ran out (a crashed worker) makes the task
  claimable again (at-least-once); the progress stays with the task for the next attempt.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from catalog_es.store.database import Connection
from catalog_es.store.migrations import Migration, packaged_sql

TASK_TABLES = ("tasks", "task_attempts", "task_queue_configs")
TASK_QUEUE_MIGRATIONS = (Migration("0901_task_queue", packaged_sql("catalog_es.store", "task_queue.sql")),)
TASK_LEASE_MIGRATIONS = (Migration("0902_task_leases", packaged_sql("catalog_es.store", "task_leases.sql")),)

WAITING = ("scheduled", "running")  # a running task whose lease ran out is waiting for another worker
FINISHED = ("success", "failed", "cancelled")


class Task(msgspec.Struct, kw_only=True):
    """A task as the queue holds it; `version` is its stream's, `worker` the lease holder's name."""

    task_id: uuid.UUID
    queue: str
    warehouse_id: uuid.UUID
    entity_type: str
    entity_id: uuid.UUID
    payload: dict[str, Any]
    attempt: int
    max_attempts: int
    due_at: datetime
    status: str
    version: int = 0
    worker: str = ""


_TASK_COLUMNS = (
    "t.task_id, t.queue, t.warehouse_id, t.entity_type, t.entity_id, t.payload, t.attempt, t.max_attempts,"
    " t.due_at, t.status, t.version"
)

_NEXT_DUE = (
    f"SELECT {_TASK_COLUMNS} FROM tasks t LEFT JOIN task_leases l ON l.task_id = t.task_id"
    " WHERE t.queue = ANY(%s) AND t.status IN ('scheduled', 'running') AND t.due_at <= %s"
    " AND (l.task_id IS NULL OR l.lease_until < %s)"
    " ORDER BY t.due_at, t.task_id LIMIT 1 FOR UPDATE OF t SKIP LOCKED"
)


def _task(row: dict[str, Any], worker: str = "") -> Task:
    return msgspec.convert(row | {"worker": worker}, Task)


async def next_due(conn: Connection, queues: Sequence[str], now: datetime) -> Task | None:
    """Inside a transaction: lock the next due task of these queues that no live lease holds, skipping
    those another worker is claiming right now (`SKIP LOCKED`); None when there is none."""
    cursor = conn.cursor(row_factory=dict_row)
    await cursor.execute(_NEXT_DUE, (list(queues), now, now))
    row = await cursor.fetchone()
    return _task(row) if row else None


async def lease_live(conn: Connection, task_id: uuid.UUID, now: datetime) -> bool:
    """Whether a lease on the task runs past `now`, as committed by the time this statement starts.

    `next_due` can return a task another worker claimed after its statement's snapshot was taken (it sorts
    the candidates before it locks one): READ COMMITTED re-checks the locked task row, which is `running`
    either way, but not the lease row read in that snapshot. This later statement sees the claim.
    """
    cursor = await conn.execute("SELECT 1 FROM task_leases WHERE task_id = %s AND lease_until >= %s", (task_id, now))
    return await cursor.fetchone() is not None


async def locked_task(conn: Connection, task_id: uuid.UUID) -> Task | None:
    """Inside a transaction: the task, locked against claims and other changes until commit."""
    cursor = conn.cursor(row_factory=dict_row)
    await cursor.execute(f"SELECT {_TASK_COLUMNS} FROM tasks t WHERE t.task_id = %s FOR UPDATE", (task_id,))
    row = await cursor.fetchone()
    return _task(row) if row else None


async def hold_lease(conn: Connection, task: Task, worker: str, attempt: int, until: datetime, now: datetime) -> None:
    """Give the lease to `worker` for `attempt` (the progress of earlier attempts stays)."""
    await conn.execute(
        "INSERT INTO task_leases (task_id, worker, attempt, lease_until, heartbeat_at) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (task_id) DO UPDATE SET worker = excluded.worker, attempt = excluded.attempt,"
        " lease_until = excluded.lease_until, heartbeat_at = excluded.heartbeat_at",
        (task.task_id, worker, attempt, until, now),
    )


async def holds_lease(conn: Connection, task: Task) -> bool:
    """Whether `task.worker` still holds the lease of `task.attempt` (not taken over after it ran out)."""
    cursor = await conn.execute(
        "SELECT 1 FROM task_leases WHERE task_id = %s AND worker = %s AND attempt = %s",
        (task.task_id, task.worker, task.attempt),
    )
    return await cursor.fetchone() is not None


async def extend_lease(conn: Connection, task: Task, until: datetime, now: datetime) -> bool:
    """Move the lease's end for its holder; False when the holder lost it or the task is no longer running."""
    cursor = await conn.execute(
        "UPDATE task_leases l SET lease_until = %s, heartbeat_at = %s FROM tasks t"
        " WHERE l.task_id = %s AND l.worker = %s AND l.attempt = %s AND t.task_id = l.task_id"
        " AND t.status = 'running' RETURNING 1",
        (until, now, task.task_id, task.worker, task.attempt),
    )
    return await cursor.fetchone() is not None


async def release_lease(conn: Connection, task_id: uuid.UUID, *, keep_progress: bool) -> None:
    """End the lease: kept (ended at once) with its progress for a retry, else removed."""
    if keep_progress:
        await conn.execute("UPDATE task_leases SET lease_until = '-infinity' WHERE task_id = %s", (task_id,))
    else:
        await conn.execute("DELETE FROM task_leases WHERE task_id = %s", (task_id,))


async def save_progress(conn: Connection, task: Task, progress: dict[str, Any]) -> bool:
    """Record how far the lease holder got; False when it no longer holds the lease."""
    cursor = await conn.execute(
        "UPDATE task_leases SET progress = %s WHERE task_id = %s AND worker = %s AND attempt = %s RETURNING 1",
        (Jsonb(progress), task.task_id, task.worker, task.attempt),
    )
    return await cursor.fetchone() is not None


async def load_progress(conn: Connection, task_id: uuid.UUID) -> dict[str, Any] | None:
    cursor = await conn.execute("SELECT progress FROM task_leases WHERE task_id = %s", (task_id,))
    row = await cursor.fetchone()
    return dict(row[0]) if row and row[0] is not None else None
