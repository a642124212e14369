"""The `catalog-es` command line: serve, migrate, relay, events tail, events subscribe."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import msgspec
import typer
import uvicorn

from api.app import create_app
from api.cli.audit import audit_cli
from api.cli.events import subscribe_events
from api.cli.projections import audit_verify, projections_cli, projector_cli
from api.cli.spark import spark_cli
from api.encoded_slash import keep_encoded_slashes
from api.logging import configure_logging
from api.metrics import serve_metrics
from api.runtime.asgi import run_fast, serve_workers, server_config
from api.runtime.database import bootstrap, database_dsn, migrate
from api.runtime.nats import nats_url, run_relay
from api.runtime.schema_check import migrate_or_exit
from api.settings import Settings, load_settings
from catalog_es.storage.outbound import disable_ambient_identity
from catalog_es.store.database import open_pool
from catalog_es.store.eventstore import read_events
from projections.checkpoints import relay_status
from projections.cloudevents import encode_structured
from projections.registry import PROCESS_PROJECTIONS
from projections.relay.config import RelayConfig
from projections.relay.metrics import RelayMetrics
from projections.runner import run_projectors

cli = typer.Typer(help="catalog-es: an event-sourced Apache Iceberg REST catalog.", no_args_is_help=True)
events_cli = typer.Typer(help="Read the event log.", no_args_is_help=True)
cli.add_typer(events_cli, name="events")
cli.add_typer(audit_cli, name="audit")
cli.add_typer(projector_cli, name="projector")
cli.add_typer(projections_cli, name="projections")
cli.add_typer(spark_cli, name="spark")
audit_cli.command("verify")(audit_verify)


def _print_version(requested: bool) -> None:
    """Eager, so `--version` answers before any command runs: it needs no settings, data dir or database."""
    if not requested:
        return
    try:
        installed = version("catalog-es")
    except PackageNotFoundError:  # run from a source tree that was never installed
        installed = "unknown (not installed)"
    typer.echo(f"catalog-es {installed}")
    raise typer.Exit


@cli.callback()
def _root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit")
    ] = False,
) -> None:
    """catalog-es: an event-sourced Apache Iceberg REST catalog."""


DataDir = Annotated[
    str | None, typer.Option("--data-dir", help="Embedded mode's data directory [default: ./.catalog-es]")
]
AllowNewerSchema = Annotated[
    bool | None,
    typer.Option(
        "--allow-newer-schema",
        help="Run on a database a newer catalog-es migrated [env CATALOG_ES__ALLOW_NEWER_SCHEMA]",
    ),
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


async def _serve(settings: Settings, dsn: str, relay: RelayConfig | None = None, *, projectors: bool = False) -> None:
    """The API, and with `relay` the NATS relay (with `projectors` the projector processes) as background tasks."""
    relay_metrics = RelayMetrics() if relay else None
    config = server_config(keep_encoded_slashes(create_app(settings, dsn, relay_metrics=relay_metrics)), settings)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():  # noqa: ASYNC110 - uvicorn offers only a flag
        await asyncio.sleep(0.05)
    if server.started:
        typer.echo(_connect_banner(settings))
    relaying = asyncio.create_task(run_relay(dsn, relay, relay_metrics)) if relay and relay_metrics else None
    projecting = asyncio.create_task(run_projectors(dsn, PROCESS_PROJECTIONS)) if projectors else None
    if relay and server.started:
        typer.echo(f"Change events: {relay.url} (JetStream stream {relay.stream}, subjects {relay.subject_prefix}.>)")
    try:
        await serving
    finally:
        for background in (relaying, projecting):
            if background:
                background.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await background


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
    workers: Annotated[int | None, typer.Option(min=1, help="uvicorn worker processes [default: 1]")] = None,
    allow_newer_schema: AllowNewerSchema = None,
) -> None:
    """Run the catalog: migrate, bootstrap the default warehouse, serve the API (and the NATS relay)."""
    _stop_on_sigterm()
    settings = load_settings(
        data_dir=data_dir, host=host, port=port, workers=workers, allow_newer_schema=allow_newer_schema or None
    )
    configure_logging(settings.log_level, json=settings.log_json)
    dsn = database_dsn(settings)
    migrate_or_exit(dsn, settings.allow_newer_schema)
    asyncio.run(bootstrap(dsn, settings))
    if settings.workers > 1:
        typer.echo(_connect_banner(settings))
        typer.echo(f"{settings.workers} workers: run `catalog-es relay` and `projector run --all` on their own")
        serve_workers(settings, dsn)
        return
    url, embedded_nats = nats_url(settings, start=True)
    try:
        relay = settings.nats.at(url) if url else None
        run_fast(_serve(settings, dsn, relay, projectors=settings.pg_dsn is None))  # embedded: projectors in-process
    finally:
        if embedded_nats:
            embedded_nats.stop()


@cli.command("migrate")
def migrate_command(data_dir: DataDir = None, allow_newer_schema: AllowNewerSchema = None) -> None:
    """Create or upgrade the database schema (idempotent); refuses a database a newer version migrated."""
    settings = load_settings(data_dir=data_dir, allow_newer_schema=allow_newer_schema or None)
    applied = migrate_or_exit(database_dsn(settings), settings.allow_newer_schema)
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


async def _until_signalled(work: asyncio.Future[None]) -> None:
    """Await `work`; SIGTERM or SIGINT cancels it cleanly (NATS and database connections closed)."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, work.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await work


async def _relay(settings: Settings, dsn: str, config: RelayConfig, metrics_port: int | None) -> None:
    metrics = RelayMetrics()
    endpoint = await serve_metrics(settings.host, metrics_port, metrics) if metrics_port is not None else None
    try:
        await _until_signalled(asyncio.ensure_future(run_relay(dsn, config, metrics)))
    finally:
        if endpoint:
            endpoint.close()


async def _relay_status(dsn: str, stream: str) -> bytes:
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            return msgspec.json.encode(await relay_status(conn, stream, datetime.now(UTC)))
    finally:
        await pool.close()


@cli.command()
def relay(
    data_dir: DataDir = None,
    status: Annotated[bool, typer.Option("--status", help="Print checkpoint, head, lag and leader as JSON")] = False,
    metrics_port: Annotated[
        int | None, typer.Option(help="Serve Prometheus metrics on this port (any path)", min=0)
    ] = None,
) -> None:
    """Publish the event log to NATS JetStream, in order, at least once (one leader; others stand by)."""
    settings = load_settings(data_dir=data_dir)
    configure_logging(settings.log_level, json=settings.log_json)
    dsn = database_dsn(settings)
    if status:
        sys.stdout.buffer.write(asyncio.run(_relay_status(dsn, settings.nats.stream)) + b"\n")
        return
    url, embedded_nats = nats_url(settings, start=True)
    if url is None:
        typer.echo("NATS is off: set CATALOG_ES__NATS__URL (or use embedded mode)", err=True)
        raise typer.Exit(2)
    asyncio.run(migrate(dsn))
    try:
        asyncio.run(_relay(settings, dsn, settings.nats.at(url), metrics_port))
    finally:
        if embedded_nats:
            embedded_nats.stop()


@events_cli.command("subscribe")
def subscribe(
    data_dir: DataDir = None,
    subject: Annotated[str | None, typer.Option(help="Subject filter [default: <prefix>.>]")] = None,
    from_start: Annotated[bool, typer.Option("--from-start", help="Replay the stream from its first event")] = False,
    durable: Annotated[
        str | None, typer.Option(help="Durable consumer name: resume where the last run stopped")
    ] = None,
    count: Annotated[int | None, typer.Option(min=1, help="Exit after N events")] = None,
) -> None:
    """Print change events from NATS as CloudEvents JSON lines (structured mode) as they arrive."""
    settings = load_settings(data_dir=data_dir)
    url, _ = nats_url(settings, start=False)
    if url is None:
        typer.echo("No NATS: start `catalog-es serve` on the data dir or set CATALOG_ES__NATS__URL", err=True)
        raise typer.Exit(2)
    filter_subject = subject or f"{settings.nats.subject_prefix}.>"
    work = subscribe_events(
        url, settings.nats.stream, filter_subject, from_start=from_start, durable=durable, count=count
    )

    async def _run() -> None:
        await _until_signalled(asyncio.ensure_future(work))

    asyncio.run(_run())


def main() -> None:
    disable_ambient_identity()  # every command, before pyarrow's AWS SDK or boto3 start
    cli()
