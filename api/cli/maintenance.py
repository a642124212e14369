"""`catalog-es maintenance run`: the Spark worker that carries out table maintenance jobs (issue 22)."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.catalog_uri import resolve_catalog_uri
from api.cli.session import DataDir, HealthHost, HealthPort, cli_dsn, cli_settings, command_group, fail
from api.settings import Settings

if TYPE_CHECKING:
    from catalog_es.spark.maintenance import MaintenanceRunner

maintenance_cli = command_group("Table maintenance (compaction, snapshot expiry, orphan files, manifests) on Spark.")


def _runner(settings: Settings, catalog_uri: str) -> MaintenanceRunner:
    """The worker's one SparkSession, on the offline jars unless `spark_packages` names Maven coordinates."""
    from catalog_es.spark.artifacts import SparkJarsError  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from catalog_es.spark.jars import spark_jars  # noqa: PLC0415
    from catalog_es.spark.maintenance import CatalogAccess, MaintenanceRunner, maintenance_session  # noqa: PLC0415

    options = settings.maintenance
    started = time.monotonic()
    try:
        jars = [] if options.spark_packages else spark_jars()
    except SparkJarsError as error:
        fail(f"{error} (set CATALOG_ES__MAINTENANCE__SPARK_PACKAGES to use Maven instead)")
    try:
        spark = maintenance_session(options.spark_master, jars, options.spark_packages)
    except ImportError:
        fail("the maintenance worker needs PySpark: pip install 'catalog-es[spark]'")
    spark.sparkContext.setLogLevel("ERROR")
    typer.echo(f"Spark session on {options.spark_master} ready in {time.monotonic() - started:.1f} s", err=True)
    access = CatalogAccess(
        uri=catalog_uri,
        credential=options.credential,
        oauth2_server_uri=options.oauth2_server_uri,
        scope=options.scope,
    )
    return MaintenanceRunner(spark, access, orphan_floor_seconds=options.orphan_min_age_seconds)


async def _work(
    settings: Settings, runner: MaintenanceRunner, *, once: bool, health: tuple[str, int | None] = ("", None)
) -> int:
    from api.runtime.database import migrate  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.health_listener import with_health  # noqa: PLC0415
    from api.runtime.task_worker import run_maintenance_worker  # noqa: PLC0415

    dsn = cli_dsn(settings)
    await migrate(dsn)
    stop = asyncio.Event()
    if not once:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)  # finish the running jobs, claim no more
    return await with_health(run_maintenance_worker(settings, dsn, runner, stop, once=once), *health)


@maintenance_cli.command("run")
def run_command(
    data_dir: DataDir = None,
    once: Annotated[
        bool, typer.Option("--once", help="Evaluate the triggers, run every due job, wait for them and exit")
    ] = False,
    catalog_uri: Annotated[
        str | None,
        typer.Option(
            help="The catalog as Spark reaches it [default: CATALOG_ES__MAINTENANCE__CATALOG_URI, else the URI the "
            "`serve` on this data dir records]"
        ),
    ] = None,
    health_port: HealthPort = None,
    health_host: HealthHost = "127.0.0.1",
) -> None:
    """Run due maintenance jobs on one SparkSession (`CATALOG_ES__MAINTENANCE__*`: master, parallelism, lease).

    Spark commits through the catalog's REST API like any client (with authentication on, as the OAuth2
    client of CATALOG_ES__MAINTENANCE__CREDENTIAL); the jobs' start and outcome are events by
    `system:maintenance`. A failed job changes nothing and is retried with backoff.
    """
    from api.logging import configure_logging  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    settings = cli_settings(data_dir)
    configure_logging(settings.log_level, json=settings.log_json)
    uri = resolve_catalog_uri(settings, catalog_uri, settings.maintenance.catalog_uri)  # before any job is claimed
    runner = _runner(settings, uri)
    try:
        ran = asyncio.run(_work(settings, runner, once=once, health=(health_host, health_port)))
        if once:
            typer.echo(f"{ran} maintenance job(s) run", err=True)
    finally:
        runner.spark.stop()
