"""`catalog-es relay`: publish the event log to NATS JetStream (one leader; the others stand by)."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.session import DataDir, cli_connection, cli_dsn, cli_settings, fail, until_signalled
from api.settings import Settings

if TYPE_CHECKING:
    from projections.relay.config import RelayConfig


async def _relay(settings: Settings, dsn: str, config: RelayConfig, metrics_port: int | None) -> None:
    from api.metrics import serve_metrics  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.nats import run_relay  # noqa: PLC0415
    from projections.relay.metrics import RelayMetrics  # noqa: PLC0415

    metrics = RelayMetrics()
    endpoint = await serve_metrics(settings.host, metrics_port, metrics) if metrics_port is not None else None
    try:
        await until_signalled(run_relay(dsn, config, metrics))
    finally:
        if endpoint:
            endpoint.close()


async def _relay_status(settings: Settings) -> bytes:
    from datetime import UTC, datetime  # noqa: PLC0415

    import msgspec  # noqa: PLC0415

    from projections.checkpoints import relay_status  # noqa: PLC0415

    async with cli_connection(settings, migrate=False) as conn:
        return msgspec.json.encode(await relay_status(conn, settings.nats.stream, datetime.now(UTC)))


def relay(
    data_dir: DataDir = None,
    status: Annotated[bool, typer.Option("--status", help="Print checkpoint, head, lag and leader as JSON")] = False,
    metrics_port: Annotated[
        int | None, typer.Option(help="Serve Prometheus metrics on this port (any path)", min=0, max=65535)
    ] = None,
) -> None:
    """Publish the event log to NATS JetStream, in order, at least once (one leader; others stand by)."""
    from api.logging import configure_logging  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.database import migrate  # noqa: PLC0415
    from api.runtime.nats import nats_url  # noqa: PLC0415

    settings = cli_settings(data_dir)
    configure_logging(settings.log_level, json=settings.log_json)
    if status:
        sys.stdout.buffer.write(asyncio.run(_relay_status(settings)) + b"\n")
        return
    dsn = cli_dsn(settings)
    url, embedded_nats = nats_url(settings, start=True)
    if url is None:
        fail("NATS is off: set CATALOG_ES__NATS__URL (or use embedded mode)", 2)
    asyncio.run(migrate(dsn))
    try:
        asyncio.run(_relay(settings, dsn, settings.nats.at(url), metrics_port))
    finally:
        if embedded_nats:
            embedded_nats.stop()
