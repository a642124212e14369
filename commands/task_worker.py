"""The one task runner: claim due tasks of a registry's queues, run their handlers, record the outcome.

`slots` tasks run at once; each keeps its lease alive while its handler runs (renewing every third of the
lease) and the handler is stopped the moment the lease is lost (the task was cancelled or taken over): this is
the only lease rule, for purges and Spark maintenance alike. Stopping the worker stops claiming and lets running
handlers finish; a handler cut off (the process killed) leaves its lease to run out, and another worker resumes
the task. The registry's scheduler steps (the maintenance triggers) run before claiming and once per idle poll.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog

from catalog_es.store.task_queue import Task
from commands.context import CommandContext
from commands.task_handlers import QueueRegistry, TaskLostError, TaskRefusedError
from commands.tasks import BACKOFF_SECONDS, claim_task, complete_task, fail_task, renew_lease

_log = structlog.get_logger(__name__)


class TaskWorker:
    """Runs the tasks of the registry's queues with their handlers."""

    def __init__(
        self,
        ctx: CommandContext,
        registry: QueueRegistry,
        name: str,
        *,
        slots: int = 2,
        poll_seconds: float = 1.0,
        lease_seconds: float = 60.0,
        backoff_seconds: float = BACKOFF_SECONDS,
    ) -> None:
        self.ctx, self.registry, self.name = ctx, registry, name
        self.queues = registry.queues
        self.slots, self.poll_seconds, self.lease_seconds = max(1, slots), poll_seconds, lease_seconds
        self.backoff_seconds = backoff_seconds

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop` is set: each slot claims and runs tasks, waiting `poll_seconds` when none is due."""
        _log.info("task worker started", worker=self.name, queues=self.queues, slots=self.slots)
        await asyncio.gather(self._schedule(stop), *(self._slot(stop) for _ in range(self.slots)))

    async def run_until_idle(self) -> int:
        """Run the scheduler steps once, then the due tasks (`slots` at a time) until none is left; return how
        many ran (tests, `worker --once`, `maintenance run --once`)."""
        await self._scheduler_steps()
        counts = await asyncio.gather(*(self._drain() for _ in range(self.slots)))
        return sum(counts)

    async def _drain(self) -> int:
        ran = 0
        while (task := await claim_task(self.ctx, self.queues, self.name, self.lease_seconds)) is not None:
            await self.run_task(task)
            ran += 1
        return ran

    async def _scheduler_steps(self) -> None:
        for step in self.registry.scheduler_steps:
            await step(self.ctx)

    async def _schedule(self, stop: asyncio.Event) -> None:
        while self.registry.scheduler_steps and not stop.is_set():
            try:
                await self._scheduler_steps()
            except Exception:  # the database is away: evaluate again after a pause
                _log.exception("a scheduler step failed", worker=self.name)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.poll_seconds)

    async def _slot(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                task = await claim_task(self.ctx, self.queues, self.name, self.lease_seconds)
            except Exception:  # the database is away: try again after a pause
                _log.exception("claiming a task failed", worker=self.name)
                task = None
            if task is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.poll_seconds)
                continue
            await self.run_task(task)

    async def run_task(self, task: Task) -> None:
        """Run one claimed task to its recorded outcome (or to the loss of its lease)."""
        handler = self.registry.handler(task.queue)
        log = _log.bind(task_id=str(task.task_id), queue=task.queue, attempt=task.attempt, worker=self.name)
        if handler is None:
            await fail_task(
                self.ctx, task, f"No handler for queue {task.queue!r}", backoff_seconds=self.backoff_seconds
            )
            return
        running: asyncio.Future[dict[str, Any]] = asyncio.ensure_future(handler(task, self.ctx))
        lost = asyncio.Event()
        heartbeat = asyncio.create_task(self._keep_lease(task, running, lost))
        try:
            result = await running
        except TaskLostError:
            log.warning("task lost: cancelled or taken over")
            return
        except TaskRefusedError as exc:
            log.warning("task refused", error=str(exc))
            await fail_task(self.ctx, task, str(exc), retry=False)
            return
        except asyncio.CancelledError:
            if not lost.is_set():
                raise  # the worker itself is being stopped: the lease runs out, another worker resumes
            log.warning("task lost: cancelled or taken over")
            return
        except Exception as exc:  # a handler's failure is the task's, recorded and retried
            log.warning("task attempt failed", error=repr(exc))
            await fail_task(self.ctx, task, f"{type(exc).__name__}: {exc}", backoff_seconds=self.backoff_seconds)
            return
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        if await complete_task(self.ctx, task, result):
            log.info("task succeeded", result=result)

    async def _keep_lease(self, task: Task, running: asyncio.Future[dict[str, Any]], lost: asyncio.Event) -> None:
        """Renew the lease while the handler runs; cancel the handler once the lease is lost."""
        while not running.done():
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                held = await renew_lease(self.ctx, task, self.lease_seconds)
            except Exception:  # the database is away: the lease may still hold, try again
                _log.exception("renewing a lease failed", task_id=str(task.task_id))
                continue
            if not held:
                lost.set()
                running.cancel()
                return
