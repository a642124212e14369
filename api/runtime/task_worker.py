"""Run the task runner over the settings' database: in `serve` (in-process), as `catalog-es worker`, or as
`catalog-es maintenance run` (the `maintenance` queue on Spark)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import structlog

from api.container import open_services, task_queues
from api.maintenance.job import JobRunner
from api.settings import Settings
from commands.task_handlers import MAINTENANCE
from commands.task_worker import TaskWorker

_log = structlog.get_logger(__name__)


def worker_name(role: str = "") -> str:
    """`[role@]host:pid:random`: unique per process, readable in a task's attempts."""
    prefix = f"{role}@" if role else ""
    return f"{prefix}{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def _run(worker: TaskWorker, stop: asyncio.Event, *, once: bool) -> int:
    if once:
        return await worker.run_until_idle()
    await worker.run(stop)
    return 0


async def run_task_worker(settings: Settings, dsn: str, stop: asyncio.Event, *, once: bool = False) -> int:
    """Serve the catalog's own queues (purge, expiry, metadata cleanup) until `stop` is set (with `once`: until
    none is due); return how many tasks ran with `once`, else 0."""
    config = settings.task_worker
    registry = task_queues(settings)
    async with open_services(settings, dsn, pool_size=(1, config.slots + 2)) as services:
        worker = TaskWorker(
            services.ctx,
            registry,
            worker_name(),
            slots=config.slots,
            poll_seconds=config.poll_seconds,
            lease_seconds=config.lease_seconds,
            backoff_seconds=config.backoff_seconds,
        )
        return await _run(worker, stop, once=once)


async def run_maintenance_worker(
    settings: Settings, dsn: str, runner: JobRunner, stop: asyncio.Event, *, once: bool = False
) -> int:
    """Serve queue `maintenance` on `runner`, evaluating the triggers before claiming; same runner, same lease
    rule as the other queues. With `once`: evaluate, run what is due, return how many ran."""
    options = settings.maintenance
    registry = task_queues(settings, maintenance=runner).only(MAINTENANCE)
    async with open_services(settings, dsn, pool_size=(1, options.parallelism + 2)) as services:
        worker = TaskWorker(
            services.ctx,
            registry,
            worker_name("maintenance"),
            slots=options.parallelism,
            poll_seconds=options.poll_seconds,
            lease_seconds=options.lease_seconds,
            backoff_seconds=settings.task_worker.backoff_seconds,
        )
        return await _run(worker, stop, once=once)


@contextmanager
def task_worker_thread(settings: Settings, dsn: str) -> Iterator[None]:
    """The one task worker of `serve --workers N`, on its own event loop in the supervising process.

    uvicorn's worker processes serve requests only; without this nothing would run purges or expiries.
    On exit it stops claiming and lets running tasks finish within the grace period.
    """
    started = threading.Event()
    running: dict[str, Any] = {}

    async def body() -> None:
        stop = asyncio.Event()
        running.update(loop=asyncio.get_running_loop(), stop=stop)
        started.set()
        await run_task_worker(settings, dsn, stop)

    def main() -> None:
        try:
            asyncio.run(body())
        except Exception:  # the worker's end is logged, never the server's
            _log.exception("the task worker stopped")
        finally:
            started.set()

    thread = threading.Thread(target=main, name="catalog-es task worker", daemon=True)
    thread.start()
    try:
        yield
    finally:
        started.wait(5)
        if "loop" in running:
            with contextlib.suppress(RuntimeError):  # its loop already ended
                running["loop"].call_soon_threadsafe(running["stop"].set)
        thread.join(settings.graceful_shutdown_seconds)
