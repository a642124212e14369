"""One maintenance job, start to end: resolve the table, record the start, run on Spark, record the outcome."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Protocol

import msgspec
import structlog

from catalog_es.events.maintenance import MaintenanceJobFinished, MaintenanceJobStarted
from catalog_es.maintenance.jobs import MaintenanceJob, decode_job
from catalog_es.spark.maintenance import JobOutcome
from catalog_es.store.task_queue import Task
from commands.context import CommandContext
from commands.maintenance_jobs import record_maintenance_job
from commands.tasks import complete_task, fail_task, renew_lease
from projections.catalog.table_lookup import TableTarget, table_target

log = structlog.get_logger("catalog_es.maintenance")


class JobRunner(Protocol):
    """Runs one policy on one table, blocking (the Spark runner); raising means nothing was committed."""

    def run(
        self, warehouse: str, table: list[str], policy_type: str, content: dict[str, Any], *, now_ms: int
    ) -> JobOutcome: ...


async def _keep_leased(ctx: CommandContext, task: Task, lease_seconds: float) -> None:
    """Renew the lease every third of it while the job runs, so no other worker claims a job that is alive."""
    while True:
        await asyncio.sleep(lease_seconds / 3)
        try:
            await renew_lease(ctx, task, lease_seconds)
        except Exception as error:
            log.warning("maintenance lease not renewed", task_id=str(task.task_id), error=str(error))


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


async def run_job(ctx: CommandContext, task: Task, runner: JobRunner, lease_seconds: float) -> None:
    """Run the task's job and settle the task: succeeded (with the figures) or failed (retried with backoff)."""
    try:
        job = decode_job(task.payload)
    except msgspec.ValidationError as error:  # a payload no worker can run: failing again will not help
        await fail_task(ctx, task, f"not a maintenance job: {error}")
        return
    async with ctx.store.connection() as conn:
        target = await table_target(conn, task.entity_id)
    if target is None or target.warehouse_status != "active":
        await complete_task(ctx, task, {"outcome": "skipped", "reason": "the table is gone or its warehouse inactive"})
        return
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
    keeper = asyncio.create_task(_keep_leased(ctx, task, lease_seconds))
    try:
        outcome = await asyncio.to_thread(
            runner.run,
            target.warehouse_reference,
            [*target.namespace, target.name],
            job.policy_type,
            job.policy,
            now_ms=ctx.now_ms(),
        )
    except Exception as error:
        message = str(error).strip().splitlines()[0][:1000] if str(error).strip() else type(error).__name__
        bound.warning("maintenance job failed", error=message)
        await _finish(ctx, task, job, target, "failed", metrics={}, error=message)
        await fail_task(ctx, task, message)
        return
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
    metrics = {**outcome.changes, "seconds": outcome.seconds}
    bound.info(
        "maintenance job succeeded", **{key: value for key, value in metrics.items() if not isinstance(value, list)}
    )
    await _finish(ctx, task, job, target, "succeeded", metrics=metrics)
    await complete_task(ctx, task, {"outcome": "succeeded", **metrics})
