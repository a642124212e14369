"""The worker loop: evaluate the triggers, claim due jobs up to the parallelism bound, run them, repeat or exit."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from api.maintenance.job import JobRunner, run_job
from catalog_es.maintenance.jobs import MAINTENANCE_QUEUE
from commands.context import CommandContext
from commands.tasks import claim_task

log = structlog.get_logger("catalog_es.maintenance")

SchedulerStep = Callable[[CommandContext], Awaitable[object]]


@dataclass(frozen=True)
class WorkerOptions:
    parallelism: int
    lease_seconds: float
    poll_seconds: float
    worker: str = f"maintenance@{socket.gethostname()}:{os.getpid()}"


async def run_worker(
    ctx: CommandContext,
    runner: JobRunner,
    options: WorkerOptions,
    *,
    once: bool,
    scheduler_step: SchedulerStep | None = None,
) -> int:
    """Run due jobs, at most `parallelism` at a time; return how many ran.

    `once`: evaluate the triggers, run every job due now (and retries that fall due while they run), wait for
    them and return. Otherwise loop: a free slot claims the next due job; with nothing due, evaluate the triggers
    again after `poll_seconds`. A job's failure is its task's (retried with backoff), never the worker's.
    """
    running: set[asyncio.Task[None]] = set()
    ran, evaluate = 0, scheduler_step is not None
    while True:
        if evaluate and scheduler_step is not None:
            await scheduler_step(ctx)
            evaluate = not once  # once: the triggers are evaluated at the start only, so the run always ends
        while len(running) < options.parallelism:
            task = await claim_task(ctx, [MAINTENANCE_QUEUE], options.worker, options.lease_seconds)
            if task is None:
                break
            ran += 1
            running.add(asyncio.create_task(run_job(ctx, task, runner, options.lease_seconds)))
        if not running:
            if once:
                return ran
            await asyncio.sleep(options.poll_seconds)
            continue
        done, _ = await asyncio.wait(
            running, timeout=None if once else options.poll_seconds, return_when=asyncio.FIRST_COMPLETED
        )
        for finished in done:
            running.discard(finished)
            if (error := finished.exception()) is not None:  # the catalog failed us, not the job: log and go on
                log.error("maintenance job not settled", error=str(error))
