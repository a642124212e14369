"""`catalog-es worker`: run the task queues' handlers (purges, expirations) beside or instead of `serve`'s own."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from api.cli.session import DataDir, cli_dsn, cli_settings
from api.settings import Settings


async def _work(settings: Settings, dsn: str, *, once: bool) -> int:
    from api.runtime.task_worker import run_task_worker  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)  # finish the running tasks, claim no more
    return await run_task_worker(settings, dsn, stop, once=once)


def worker(
    data_dir: DataDir = None,
    once: Annotated[bool, typer.Option("--once", help="Run the tasks due now, then exit")] = False,
) -> None:
    """Run due tasks of the in-process queues (tabular_purge, ...); several workers share the queue safely."""
    from api.logging import configure_logging  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.schema_check import migrate_or_exit  # noqa: PLC0415

    settings = cli_settings(data_dir)
    configure_logging(settings.log_level, json=settings.log_json)
    dsn = cli_dsn(settings)
    migrate_or_exit(dsn, settings.allow_newer_schema)
    ran = asyncio.run(_work(settings, dsn, once=once))
    if once:
        typer.echo(f"ran {ran} task(s)")
