"""Reads of the task queue's read model for the management API: filtered pages, one task with its attempts."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from psycopg import sql
from psycopg.rows import dict_row

from catalog_es.store.database import Connection


class TaskFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Every given criterion must hold; `after` is the (created_at, task_id) of the last task of the page before."""

    statuses: list[str] | None = None
    queues: list[str] | None = None
    entity_ids: list[uuid.UUID] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    after: tuple[datetime, uuid.UUID] | None = None


class TaskRow(msgspec.Struct, frozen=True, kw_only=True):
    task_id: uuid.UUID
    queue: str
    warehouse_id: uuid.UUID
    entity_type: str
    entity_id: uuid.UUID
    payload: dict[str, Any]
    status: str
    attempt: int
    max_attempts: int
    due_at: datetime
    created_at: datetime
    updated_at: datetime
    scheduled_by: str
    last_error: str | None
    picked_up_at: datetime | None
    heartbeat_at: datetime | None
    progress: dict[str, Any] | None


class AttemptRow(msgspec.Struct, frozen=True, kw_only=True):
    attempt: int
    worker: str
    status: str
    started_at: datetime
    ended_at: datetime | None
    message: str | None
    result: dict[str, Any] | None


_SELECT = (
    "SELECT t.task_id, t.queue, t.warehouse_id, t.entity_type, t.entity_id, t.payload, t.status, t.attempt,"
    " t.max_attempts, t.due_at, t.created_at, t.updated_at, t.scheduled_by, t.last_error,"
    " (SELECT a.started_at FROM task_attempts a WHERE a.task_id = t.task_id AND a.attempt = t.attempt) AS picked_up_at,"
    " l.heartbeat_at, l.progress FROM tasks t LEFT JOIN task_leases l ON l.task_id = t.task_id"
)


async def list_tasks(conn: Connection, warehouse_ids: list[uuid.UUID], where: TaskFilter, limit: int) -> list[TaskRow]:
    """Tasks of these warehouses matching `where`, newest first, at most `limit`."""
    clauses = [sql.SQL("t.warehouse_id = ANY(%(warehouses)s)")]
    params: dict[str, Any] = {"warehouses": warehouse_ids, "limit": limit}
    optional = (
        ("statuses", where.statuses, "t.status = ANY(%(statuses)s)"),
        ("queues", where.queues, "t.queue = ANY(%(queues)s)"),
        ("entities", where.entity_ids, "t.entity_id = ANY(%(entities)s)"),
        ("after_time", where.created_after, "t.created_at > %(after_time)s"),
        ("before_time", where.created_before, "t.created_at < %(before_time)s"),
    )
    for name, value, clause in optional:
        if value is not None:
            params[name] = value
            clauses.append(sql.SQL(clause))
    if where.after is not None:
        params["cursor_time"], params["cursor_id"] = where.after
        clauses.append(sql.SQL("(t.created_at, t.task_id) < (%(cursor_time)s, %(cursor_id)s)"))
    query = sql.SQL("{} WHERE {} ORDER BY t.created_at DESC, t.task_id DESC LIMIT %(limit)s").format(
        sql.SQL(_SELECT),
        sql.SQL(" AND ").join(clauses),
    )
    cursor = conn.cursor(row_factory=dict_row)
    await cursor.execute(query, params)
    return [msgspec.convert(row, TaskRow) for row in await cursor.fetchall()]


async def task_details(
    conn: Connection, warehouse_ids: list[uuid.UUID], task_id: uuid.UUID
) -> tuple[TaskRow, list[AttemptRow]] | None:
    """One task of these warehouses with its attempts, newest first; None when it is not theirs."""
    cursor = conn.cursor(row_factory=dict_row)
    await cursor.execute(_SELECT + " WHERE t.task_id = %s AND t.warehouse_id = ANY(%s)", (task_id, warehouse_ids))
    row = await cursor.fetchone()
    if row is None:
        return None
    await cursor.execute(
        "SELECT attempt, worker, status, started_at, ended_at, message, result FROM task_attempts"
        " WHERE task_id = %s ORDER BY attempt DESC",
        (task_id,),
    )
    attempts = [msgspec.convert(a, AttemptRow) for a in await cursor.fetchall()]
    return msgspec.convert(row, TaskRow), attempts


async def queue_config(conn: Connection, warehouse_id: uuid.UUID, queue: str) -> tuple[dict[str, Any], int | None]:
    """A warehouse's configuration of a queue (empty when never set) and its heartbeat limit."""
    cursor = await conn.execute(
        "SELECT config, max_seconds_since_last_heartbeat FROM task_queue_configs"
        " WHERE warehouse_id = %s AND queue = %s",
        (warehouse_id, queue),
    )
    row = await cursor.fetchone()
    return (dict(row[0]), row[1]) if row else ({}, None)
