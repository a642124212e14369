"""Run the task worker over the settings' database: in `serve` (in-process) or as `catalog-es worker`."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid

from api.container import open_services
from api.settings import Settings
from commands.builtin_tasks import register_builtin_task_handlers
from commands.task_handlers import registered_queues
from commands.task_worker import TaskWorker


def worker_name() -> str:
    """`host:pid:random`: unique per process, readable in a task's attempts."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def run_task_worker(settings: Settings, dsn: str, stop: asyncio.Event, *, once: bool = False) -> int:
    """Serve the registered in-process queues until `stop` is set (with `once`: until none is due); return
    how many tasks ran with `once`, else 0."""
    config = settings.task_worker
    register_builtin_task_handlers(purge_concurrency=config.purge_concurrency, purge_batch_size=config.purge_batch_size)
    async with open_services(settings, dsn, pool_size=(1, config.slots + 2)) as services:
        worker = TaskWorker(
            services.ctx,
            registered_queues(),
            worker_name(),
            slots=config.slots,
            poll_seconds=config.poll_seconds,
            lease_seconds=config.lease_seconds,
            backoff_seconds=config.backoff_seconds,
        )
        if once:
            return await worker.run_until_idle()
        await worker.run(stop)
        return 0
