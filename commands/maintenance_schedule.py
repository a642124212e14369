"""The scheduler step of table maintenance (issue 22): queue the jobs the triggers make due, once each.

`catalog-es maintenance run` (and `--once`) calls `schedule_due_jobs` before it claims work from queue
`maintenance`; it may run anywhere and as often as wanted: a job already scheduled or running for the same
table and policy type is never queued again, and two schedulers decide one after the other.
"""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.maintenance.health import TableHealth
from catalog_es.maintenance.jobs import MAINTENANCE_ACTOR, MAINTENANCE_QUEUE, MaintenanceJob, encode_job
from catalog_es.maintenance.policy_types import PolicyContentError
from catalog_es.maintenance.ports import MaintenanceState
from catalog_es.maintenance.triggers import due_jobs, nearest_policies
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.tasks import NewTask, schedule_task

SCHEDULER_METADATA = EventMetadata(actor=MAINTENANCE_ACTOR)
MAX_ATTEMPTS = 4  # a failed job is retried with the queue's backoff, then recorded failed for good


class ScheduledJob(msgspec.Struct, frozen=True, kw_only=True):
    task_id: uuid.UUID
    table_id: uuid.UUID
    warehouse_id: uuid.UUID
    job: MaintenanceJob


async def _due(
    ctx: CommandContext, state: MaintenanceState, warehouse_id: uuid.UUID | None
) -> list[tuple[TableHealth, MaintenanceJob]]:
    async with ctx.store.connection() as conn:
        await state.catch_up(conn)
        tables = await state.candidates(conn, warehouse_id)
        declared = await state.declared_for_tables(conn, [health.table_id for health in tables])
    now = ctx.now_ms()
    due: list[tuple[TableHealth, MaintenanceJob]] = []
    for health in tables:
        try:
            policies = nearest_policies(declared.get(health.table_id, []))
        except PolicyContentError:
            continue  # content stored under older rules: the table is skipped, never the whole run
        due.extend((health, job) for job in due_jobs(health, policies, now))
    return due


async def schedule_due_jobs(
    ctx: CommandContext,
    state: MaintenanceState,
    *,
    warehouse_id: uuid.UUID | None = None,
    metadata: EventMetadata = SCHEDULER_METADATA,
) -> list[ScheduledJob]:
    """Evaluate every table's effective policies against its health (brought to the log head first) and queue
    the jobs due now on `maintenance`, skipping a (table, type) that already has one scheduled or running.
    All of one step's jobs are scheduled in one transaction. Returns what was queued."""
    due = await _due(ctx, state, warehouse_id)
    if not due:
        return []
    scheduled: list[ScheduledJob] = []
    async with ctx.store.transaction(metadata) as tx:
        await state.lock_scheduling(tx.conn)
        queued = await state.queued_jobs(tx.conn, list({health.table_id for health, _ in due}))
        for health, job in due:
            if job.policy_type in queued.get(health.table_id, set()):
                continue
            task = NewTask(
                queue=MAINTENANCE_QUEUE,
                warehouse_id=health.warehouse_id,
                entity_type="table",
                entity_id=health.table_id,
                payload=encode_job(job),
                max_attempts=MAX_ATTEMPTS,
            )
            task_id = await schedule_task(tx, ctx, task)
            queued.setdefault(health.table_id, set()).add(job.policy_type)
            scheduled.append(
                ScheduledJob(task_id=task_id, table_id=health.table_id, warehouse_id=health.warehouse_id, job=job)
            )
    return scheduled
