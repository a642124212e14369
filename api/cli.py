"""The `catalog-es` command line: serve, migrate, events tail."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Annotated

import typer
import uvicorn

from api.app import create_app
from api.encoded_slash import keep_encoded_slashes
from api.logging import configure_logging
from api.runtime import bootstrap, database_dsn, migrate
from api.settings import Settings, load_settings
from catalog_es.database import open_pool
from catalog_es.eventstore import read_events
from projections.cloudevents import encode_structured

cli = typer.Typer(help="catalog-es: an event-sourced Apache Iceberg REST catalog.", no_args_is_help=True)
events_cli = typer.Typer(help="Read the event log.", no_args_is_help=True)
cli.add_typer(events_cli, name="events")

DataDir = Annotated[
    str | None, typer.Option("--data-dir", help="Embedded mode's data directory [default: ./.catalog-es]")
]


def _connect_banner(settings: Settings) -> str:
    uri = settings.public_uri
    name = settings.default_warehouse
    return f"""catalog-es is ready: {uri} (warehouse '{name}'), health at http://{settings.host}:{settings.port}/health

Connect pyiceberg:
    from pyiceberg.catalog import load_catalog
    catalog = load_catalog("catalog_es", type="rest", uri="{uri}", warehouse="{name}")

Connect Spark (conf keys):
    spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
    spark.sql.catalog.catalog_es=org.apache.iceberg.spark.SparkCatalog
    spark.sql.catalog.catalog_es.type=rest
    spark.sql.catalog.catalog_es.uri={uri}
    spark.sql.catalog.catalog_es.warehouse={name}
    spark.sql.catalog.catalog_es.io-impl=org.apache.iceberg.hadoop.HadoopFileIO
"""


async def _serve(settings: Settings, dsn: str) -> None:
    config = uvicorn.Config(
        keep_encoded_slashes(create_app(settings, dsn)),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():  # noqa: ASYNC110 - uvicorn offers only a flag
        await asyncio.sleep(0.05)
    if server.started:
        typer.echo(_connect_banner(settings))
    await serving


def _stop_on_sigterm() -> None:
    """Make SIGTERM a clean exit, so exit handlers run and the embedded database stops.

    uvicorn handles SIGTERM while serving and raises it again once it has shut down.
    """

    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, _exit)


@cli.command()
def serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Address to listen on [default: 127.0.0.1]")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on [default: 8181]")] = None,
) -> None:
    """Run the catalog: migrate, bootstrap the default warehouse, serve the API."""
    _stop_on_sigterm()
    settings = load_settings(data_dir=data_dir, host=host, port=port)
    configure_logging(settings.log_level, json=settings.log_json)
    dsn = database_dsn(settings)
    asyncio.run(migrate(dsn))
    asyncio.run(bootstrap(dsn, settings))
    asyncio.run(_serve(settings, dsn))


@cli.command("migrate")
def migrate_command(data_dir: DataDir = None) -> None:
    """Create or upgrade the database schema (idempotent)."""
    settings = load_settings(data_dir=data_dir)
    applied = asyncio.run(migrate(database_dsn(settings)))
    typer.echo(f"applied: {', '.join(applied)}" if applied else "schema is up to date")


async def _tail(dsn: str, limit: int | None) -> None:
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            for event in await read_events(conn, last=limit):
                sys.stdout.buffer.write(encode_structured(event) + b"\n")
    finally:
        await pool.close()
    sys.stdout.flush()


@events_cli.command("tail")
def tail(
    data_dir: DataDir = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the newest N events")] = None,
) -> None:
    """Print the event log as CloudEvents JSON lines (structured mode), oldest first."""
    settings = load_settings(data_dir=data_dir)
    asyncio.run(_tail(database_dsn(settings), limit))


def main() -> None:
    cli()
