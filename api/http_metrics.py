"""HTTP request and connection-pool metrics for /metrics, and a log line carrying the message of every 4xx answer.

The series live in a registry of their own per app (prometheus_client), so two apps in one process never share
figures. Requests are labelled by route template (`/catalog/v1/{prefix}/namespaces`), never by raw path: the
label set stays bounded whatever callers send. Each uvicorn worker counts its own requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import structlog
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from catalog_es.store.database import Pool

_log = structlog.get_logger("catalog_es.http")
disable_created_metrics()  # type: ignore[no-untyped-call]  # no `_created` twin per counter: nobody reads it

MESSAGE_BYTES = 8192  # enough for an error envelope; a larger 4xx body is logged without its message
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

# psycopg_pool's get_stats() keys: gauges are the pool's state now, counters grow from its start.
_POOL_GAUGES = {
    "pool_size": ("db_pool_connections", "Connections the pool holds (busy or idle)"),
    "pool_available": ("db_pool_connections_idle", "Idle connections ready to be handed out"),
    "pool_max": ("db_pool_connections_max", "Most connections the pool may open"),
    "requests_waiting": ("db_pool_requests_waiting", "Requests waiting for a connection now"),
}
_POOL_COUNTERS = {
    "requests_num": ("db_pool_requests", "Connections asked of the pool", 1.0),
    "requests_queued": ("db_pool_requests_queued", "Requests that had to wait for a connection", 1.0),
    "requests_wait_ms": ("db_pool_requests_wait_seconds", "Time requests spent waiting for a connection", 0.001),
    "requests_errors": ("db_pool_requests_errors", "Requests that got no connection (timeout or error)", 1.0),
    "connections_num": ("db_pool_connections_opened", "Connection attempts to the database", 1.0),
    "connections_errors": ("db_pool_connections_errors", "Failed connection attempts", 1.0),
    "connections_lost": ("db_pool_connections_lost", "Connections found broken and discarded", 1.0),
}


class PoolCollector(Collector):
    """Reads `pool.get_stats()` at scrape time (nothing is reset: the counters keep growing)."""

    def __init__(self) -> None:
        self.pool: Pool | None = None

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        stats: dict[str, int] = self.pool.get_stats() if self.pool is not None else {}
        for key, (name, help_text) in _POOL_GAUGES.items():
            gauge = GaugeMetricFamily(f"catalog_es_{name}", help_text)
            if self.pool is not None:
                gauge.add_metric([], stats.get(key, 0))
            yield gauge
        for key, (name, help_text, scale) in _POOL_COUNTERS.items():
            counter = CounterMetricFamily(f"catalog_es_{name}", help_text)
            if self.pool is not None:
                counter.add_metric([], stats.get(key, 0) * scale)
            yield counter


class HttpMetrics:
    """The series one app exposes besides the relay's and projectors': requests by route and status, the pool."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        labels = ("method", "route", "status")
        self.requests = Counter("catalog_es_http_requests", "HTTP requests answered", labels, registry=self.registry)
        self.duration = Histogram(
            "catalog_es_http_request_duration_seconds",
            "Time to answer an HTTP request (to its last byte)",
            labels,
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "catalog_es_http_requests_in_flight", "HTTP requests being answered now", registry=self.registry
        )
        self.pool = PoolCollector()
        self.registry.register(self.pool)
        # The series of one label set, looked up once: `labels()` takes a lock and checks its arguments per call.
        self._series: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """One answered request."""
        key = (method, route, status)
        series = self._series.get(key)
        if series is None:
            labels = (method, route, str(status))
            series = self._series[key] = (self.requests.labels(*labels), self.duration.labels(*labels))
        series[0].inc()
        series[1].observe(seconds)

    def text(self) -> str:
        return generate_latest(self.registry).decode()


class _ErrorModel(msgspec.Struct):
    message: str = ""
    type: str = ""


class _ErrorEnvelope(msgspec.Struct):
    error: _ErrorModel


def log_rejected(method: str, route: str, path: str, status: int, body: bytes) -> None:
    """The caller's mistake, with the message it was answered (an Iceberg error envelope when there is one)."""
    error: dict[str, Any] = {}
    try:
        envelope = msgspec.json.decode(body, type=_ErrorEnvelope)
        error = {"error_type": envelope.error.type, "message": envelope.error.message}
    except msgspec.DecodeError:
        pass
    _log.info("request.rejected", method=method, route=route, path=path, status=status, **error)
