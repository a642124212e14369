"""`catalog-es worker`: run the task queues' handlers (purges, expirations) beside or instead of `serve`'s own."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from api.cli.session import DataDir, HealthHost, HealthPort, cli_dsn, cli_settings
from api.settings import Settings


async def _work(settings: Settings, dsn: str, *, once: bool, health: tuple[str, int | None] = ("", None)) -> int:
    from api.runtime.health_listener import with_health  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.task_worker import run_task_worker  # noqa: PLC0415

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)  # finish the running tasks, claim no more
    return await with_health(run_task_worker(settings, dsn, stop, once=once), *health)


def worker(
    data_dir: DataDir = None,
    once: Annotated[bool, typer.Option("--once", help="Run the tasks due now, then exit")] = False,
    health_port: HealthPort = None,
    health_host: HealthHost = "127.0.0.1",
) -> None:
    """Run due tasks of the catalog's queues (tabular_purge, tabular_expiration, metadata_cleanup); any number of
    workers share the queues safely. Spark maintenance runs in `catalog-es maintenance run`."""
    from api.logging import configure_logging  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.schema_check import migrate_or_exit  # noqa: PLC0415

    settings = cli_settings(data_dir)
    configure_logging(settings.log_level, json=settings.log_json)
    dsn = cli_dsn(settings)
    migrate_or_exit(dsn, settings.allow_newer_schema)
    ran = asyncio.run(_work(settings, dsn, once=once, health=(health_host, health_port)))
    if once:
        typer.echo(f"ran {ran} task(s)")
