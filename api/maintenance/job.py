"""The `maintenance` queue's handler: resolve the table, record the start, run the job on Spark, record the outcome.

The task runner (commands/task_worker.py) owns the lease, as for every queue: when the lease is lost (the job
was cancelled or another worker took it over) it cancels this handler, which cancels the Spark job and records
nothing more. The outcome is recorded only while the lease is still held.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import structlog

from catalog_es.events.maintenance import MaintenanceJobFinished, MaintenanceJobStarted
from catalog_es.maintenance.jobs import MaintenanceJob, decode_job
from catalog_es.spark.maintenance import JobOutcome
from catalog_es.store.task_queue import Task
from commands.context import CommandContext
from commands.maintenance_jobs import record_maintenance_job
from commands.task_handlers import TaskHandler, TaskLostError
from commands.tasks import renew_lease
from projections.catalog.table_lookup import TableTarget, table_target

log = structlog.get_logger("catalog_es.maintenance")


class JobRunner(Protocol):
    """Runs one policy on one table, blocking (the Spark runner); raising means nothing was committed."""

    def run(
        self, warehouse: str, table: list[str], policy_type: str, content: dict[str, Any], *, now_ms: int, job_id: str
    ) -> JobOutcome: ...

    def cancel(self, job_id: str) -> None:
        """Stop the job `run` is running under `job_id` (from another thread); `run` then raises."""


async def _finish(
    ctx: CommandContext, task: Task, job: MaintenanceJob, target: TableTarget, outcome: str, **fields: Any
) -> None:
    event = MaintenanceJobFinished(
        table_id=task.entity_id,
        warehouse_id=target.warehouse_id,
        job_id=task.task_id,
        policy_type=job.policy_type,
        attempt=task.attempt,
        outcome=outcome,  # type: ignore[arg-type]
        **fields,
    )
    await record_maintenance_job(ctx, event)


class MaintenanceJobError(Exception):
    """A job Spark could not carry out (nothing committed); its message is the first line of Spark's error."""


async def _still_held(ctx: CommandContext, task: Task, lease_seconds: float) -> None:
    """Renew the lease before recording an outcome; a job whose lease is gone records nothing."""
    if not await renew_lease(ctx, task, lease_seconds):
        raise TaskLostError


def maintenance_handler(runner: JobRunner, lease_seconds: float) -> TaskHandler:
    """The handler of queue `maintenance`, running each job on `runner` (one SparkSession)."""

    async def run_job(task: Task, ctx: CommandContext) -> dict[str, Any]:
        job = decode_job(task.payload)  # a payload no worker can run fails the attempt
        async with ctx.store.connection() as conn:
            target = await table_target(conn, task.entity_id)
        if target is None or target.warehouse_status != "active":
            return {"outcome": "skipped", "reason": "the table is gone or its warehouse inactive"}
        await record_maintenance_job(
            ctx,
            MaintenanceJobStarted(
                table_id=task.entity_id,
                warehouse_id=target.warehouse_id,
                job_id=task.task_id,
                policy_type=job.policy_type,
                attempt=task.attempt,
                trigger=job.trigger,
            ),
        )
        bound = log.bind(task_id=str(task.task_id), table_id=str(task.entity_id), policy_type=job.policy_type)
        bound.info("maintenance job started", attempt=task.attempt)
        job_id = f"{task.task_id}:{task.attempt}"
        try:
            outcome = await asyncio.to_thread(
                runner.run,
                target.warehouse_reference,
                [*target.namespace, target.name],
                job.policy_type,
                job.policy,
                now_ms=ctx.now_ms(),
                job_id=job_id,
            )
        except asyncio.CancelledError:  # the lease is lost (or the worker stops): stop the Spark job too
            bound.warning("maintenance job stopped: its lease is lost")
            runner.cancel(job_id)
            raise
        except Exception as error:
            message = str(error).strip().splitlines()[0][:1000] if str(error).strip() else type(error).__name__
            bound.warning("maintenance job failed", error=message)
            await _still_held(ctx, task, lease_seconds)
            await _finish(ctx, task, job, target, "failed", metrics={}, error=message)
            raise MaintenanceJobError(
                message
            ) from error  # the runner records the failed attempt (retried with backoff)
        await _still_held(ctx, task, lease_seconds)
        metrics = {**outcome.changes, "seconds": outcome.seconds}
        bound.info(
            "maintenance job succeeded", **{key: value for key, value in metrics.items() if not isinstance(value, list)}
        )
        await _finish(ctx, task, job, target, "succeeded", metrics=metrics)
        return {"outcome": "succeeded", **metrics}

    return run_job
