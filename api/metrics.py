"""GET /metrics: relay figures and projector lag in the Prometheus text format (API, open scrape port, relay)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from litestar import Response, Router, get
from litestar.datastructures import State

from api.auth.rules import preflight, requires, server_operator
from api.container import services
from projections.checkpoints import ProjectorStatus
from projections.registry import all_statuses
from projections.relay.metrics import RelayMetrics

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def prometheus_text(metrics: RelayMetrics | None, now: datetime | None = None) -> str:
    if metrics is None:
        return ""
    now = now or datetime.now(UTC)
    label = f'{{relay="{metrics.relay}"}}'
    series = [
        ("relay_leader", "gauge", "1 while this process holds the relay's leadership lock", int(metrics.leader)),
        ("relay_nats_connected", "gauge", "1 while connected to NATS", int(metrics.nats_connected)),
        ("relay_head_position", "gauge", "Last position in the event log", metrics.head_position),
        ("relay_published_position", "gauge", "Last position acknowledged by JetStream", metrics.published_position),
        ("relay_lag_positions", "gauge", "Events in the log not yet on the stream", metrics.lag_positions),
        ("relay_lag_seconds", "gauge", "Age of the oldest event not yet on the stream", metrics.lag_seconds(now)),
        ("relay_published_total", "counter", "Messages acknowledged by JetStream", metrics.published_total),
        ("relay_published_per_second", "gauge", "Acked messages per second (10 s)", metrics.published_per_second),
        ("relay_duplicates_total", "counter", "Publishes JetStream dropped as duplicates", metrics.duplicates_total),
        ("relay_data_omitted_total", "counter", "Events sent without data (too large)", metrics.data_omitted_total),
        ("relay_errors_total", "counter", "NATS or database failures the relay retried", metrics.errors_total),
    ]
    lines = []
    for name, kind, help_text, value in series:
        lines += [f"# HELP catalog_es_{name} {help_text}", f"# TYPE catalog_es_{name} {kind}"]
        lines.append(f"catalog_es_{name}{label} {value}")
    return "\n".join(lines) + "\n"


def projector_text(statuses: list[ProjectorStatus]) -> str:
    """Checkpoint, head and lag gauges per projector (read from the database at scrape time)."""
    series = [
        ("projector_checkpoint_position", "Last position applied to the read model", "checkpoint"),
        ("projector_head_position", "Last position in the event log", "head"),
        ("projector_lag_positions", "Events in the log not yet applied", "lag_positions"),
        ("projector_lag_seconds", "Age of the oldest event not yet applied", "lag_seconds"),
    ]
    lines = []
    for name, help_text, field in series:
        lines += [f"# HELP catalog_es_{name} {help_text}", f"# TYPE catalog_es_{name} gauge"]
        lines += [f'catalog_es_{name}{{projector="{s.projector}"}} {getattr(s, field)}' for s in statuses]
    return "\n".join(lines) + "\n" if statuses else ""


async def metrics_text(state: State) -> str:
    """Everything this process exposes: the in-process relay's figures, every projector's lag, HTTP and pool."""
    built = services(state)
    text = prometheus_text(built.relay_metrics)
    async with built.store.connection() as conn:
        text += projector_text(await all_statuses(conn, datetime.now(UTC)))
    http_metrics = getattr(state, "http_metrics", None)
    return text + (http_metrics.text() if http_metrics is not None else "")


@get("/metrics", include_in_schema=False, opt=requires(server_operator))
async def metrics(state: State) -> Response[str]:
    """On the API port: authenticated like any route, and for a server admin or operator only (api/auth/rules.py).

    A scraper without a token uses the open listener of `CATALOG_ES__METRICS__PORT` instead.
    """
    return Response(await metrics_text(state), media_type=CONTENT_TYPE)


async def serve_metrics(host: str, port: int, relay_metrics: RelayMetrics) -> asyncio.Server:
    """A minimal HTTP endpoint for a relay running on its own: every request gets the metrics."""

    async def text() -> str:
        return prometheus_text(relay_metrics)

    return await serve_text(host, port, text)


async def serve_text(
    host: str, port: int, produce: Callable[[], Awaitable[str]], *, reuse_port: bool = False
) -> asyncio.Server:
    """An open scrape listener: every request on it gets the metrics, nothing else is served there.

    `reuse_port`: the API's worker processes each bind the same port (the kernel spreads the scrapes).
    """

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            body = (await produce()).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Type: {CONTENT_TYPE}\r\nContent-Length: {len(body)}\r\n"
            writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
            await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(answer, host, port, reuse_port=reuse_port)


METRICS_ROUTER = Router("/", route_handlers=[metrics], opt=preflight(server_operator))
"""In a router of its own so that its `OPTIONS` answer, too, is for operators only."""
