"""`catalog-es serve` and `catalog-es migrate`: the two commands that may create a catalog."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.session import DataDir, cli_dsn, cli_settings, fail
from api.settings import Settings

if TYPE_CHECKING:
    from api.runtime.front_door import FrontDoor
    from projections.relay.config import RelayConfig

_PORT_RANGE = (1, 65535)
AllowNewerSchema = Annotated[
    bool | None,
    typer.Option(
        "--allow-newer-schema",
        help="Run on a database a newer catalog-es migrated [env CATALOG_ES__ALLOW_NEWER_SCHEMA]",
    ),
]


def _process_lines(settings: Settings, *, relay: str | None) -> list[str]:
    """Which of the catalog's processes this `serve` runs, and what the operator must run beside it."""
    own = ["the API"]
    elsewhere = []
    if settings.workers > 1 or settings.pg_dsn is not None:
        elsewhere.append("`catalog-es projector run --all`")
    else:
        own.append("the projectors")
    if relay:
        own.append("the NATS relay")
    elif settings.workers > 1 and settings.nats.url:
        elsewhere.append("`catalog-es relay`")
    if settings.task_worker.enabled:
        own.append("the task worker (purges, expiries)")
    else:
        elsewhere.append("`catalog-es worker` (purges and expiries run nowhere else)")
    elsewhere.append("`catalog-es maintenance run` for Spark table maintenance")
    lines = [f"Processes:  {settings.workers} API worker(s); this process runs {', '.join(own)}"]
    lines.append(f"            run beside it: {', '.join(elsewhere)}")
    return lines


async def _serve(
    settings: Settings, dsn: str, door: FrontDoor, relay: RelayConfig | None = None, *, projectors: bool = False
) -> None:
    """The API, and with `relay` the NATS relay (with `projectors` the projector processes) as background tasks;
    the task worker too unless `task_worker.enabled` is false."""
    import uvicorn  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    from api.app import create_app  # noqa: PLC0415
    from api.encoded_slash import keep_encoded_slashes  # noqa: PLC0415
    from api.runtime.asgi import server_config  # noqa: PLC0415
    from api.runtime.front_door import banner  # noqa: PLC0415
    from api.runtime.nats import run_relay  # noqa: PLC0415
    from api.runtime.task_worker import run_task_worker  # noqa: PLC0415
    from projections.registry import PROCESS_PROJECTIONS  # noqa: PLC0415
    from projections.relay.metrics import RelayMetrics  # noqa: PLC0415
    from projections.runner import run_projectors  # noqa: PLC0415

    relay_metrics = RelayMetrics() if relay else None
    config = server_config(keep_encoded_slashes(create_app(settings, dsn, relay_metrics=relay_metrics)), settings)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():  # noqa: ASYNC110 - uvicorn offers only a flag
        await asyncio.sleep(0.05)
    if server.started:  # the port accepts connections from here on
        typer.echo(banner(door) + "\n".join(_process_lines(settings, relay=relay.url if relay else None)))
    relaying = asyncio.create_task(run_relay(dsn, relay, relay_metrics)) if relay and relay_metrics else None
    projecting = asyncio.create_task(run_projectors(dsn, PROCESS_PROJECTIONS)) if projectors else None
    stop_working = asyncio.Event()
    working = (
        asyncio.create_task(run_task_worker(settings, dsn, stop_working)) if settings.task_worker.enabled else None
    )
    if relay and server.started:
        typer.echo(f"Change events: {relay.url} (JetStream stream {relay.stream}, subjects {relay.subject_prefix}.>)")
    try:
        await serving
    finally:
        if working:  # let running tasks finish within the grace period; a task cut off resumes elsewhere
            stop_working.set()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(working, settings.graceful_shutdown_seconds)
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


def serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Address to listen on [default: 127.0.0.1]")] = None,
    port: Annotated[
        int | None, typer.Option(min=_PORT_RANGE[0], max=_PORT_RANGE[1], help="Port to listen on [default: 8181]")
    ] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="uvicorn worker processes [default: 1]")] = None,
    allow_newer_schema: AllowNewerSchema = None,
) -> None:
    """Run the catalog: migrate, bootstrap the default warehouse, serve the API (and the NATS relay)."""
    from api.logging import configure_logging  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.asgi import run_fast, serve_workers  # noqa: PLC0415
    from api.runtime.database import bootstrap  # noqa: PLC0415
    from api.runtime.front_door import existing_warehouses, front_door  # noqa: PLC0415
    from api.runtime.nats import nats_url  # noqa: PLC0415
    from api.runtime.schema_check import migrate_or_exit  # noqa: PLC0415
    from api.runtime.serving_record import local_catalog_uri, serving_recorded  # noqa: PLC0415
    from api.runtime.task_worker import task_worker_thread  # noqa: PLC0415

    settings = cli_settings(
        data_dir, create=True, host=host, port=port, workers=workers, allow_newer_schema=allow_newer_schema or None
    )
    if not _PORT_RANGE[0] <= settings.port <= _PORT_RANGE[1]:  # from the environment, which typer does not check
        fail(f"port {settings.port} is not in {_PORT_RANGE[0]}..{_PORT_RANGE[1]}", 2)
    _stop_on_sigterm()
    configure_logging(settings.log_level, json=settings.log_json)
    dsn = cli_dsn(settings)
    migrate_or_exit(dsn, settings.allow_newer_schema)
    asyncio.run(bootstrap(dsn, settings))
    door = front_door(settings, asyncio.run(existing_warehouses(settings, dsn)))
    # The operator CLI on this data dir (`maintenance run`) reaches this server through the record.
    with serving_recorded(settings.data_path, local_catalog_uri(settings.host, settings.port)):
        if settings.workers > 1:
            _announce_when_listening(settings, door)
            with task_worker_thread(settings, dsn) if settings.task_worker.enabled else contextlib.nullcontext():
                serve_workers(settings, dsn)
            return
        url, embedded_nats = nats_url(settings, start=True)
        try:
            relay = settings.nats.at(url) if url else None
            run_fast(_serve(settings, dsn, door, relay, projectors=settings.pg_dsn is None))  # embedded: in-process
        finally:
            if embedded_nats:
                embedded_nats.stop()


def _announce_when_listening(settings: Settings, door: FrontDoor) -> None:
    """Print the banner once a worker answers (uvicorn's workers take a while to start)."""
    from api.runtime.front_door import banner, wait_until_serving  # noqa: PLC0415 - the CLI imports lazily

    def announce() -> None:
        if wait_until_serving(f"{door.base_url}/health", timeout=300):
            typer.echo(banner(door) + "\n".join(_process_lines(settings, relay=None)))

    threading.Thread(target=announce, name="catalog-es banner", daemon=True).start()


def migrate_command(data_dir: DataDir = None, allow_newer_schema: AllowNewerSchema = None) -> None:
    """Create or upgrade the database schema (idempotent); refuses a database a newer version migrated."""
    from api.runtime.schema_check import migrate_or_exit  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    settings = cli_settings(data_dir, create=True, allow_newer_schema=allow_newer_schema or None)
    applied = migrate_or_exit(cli_dsn(settings), settings.allow_newer_schema)
    typer.echo(f"applied: {', '.join(applied)}" if applied else "schema is up to date")
