"""Which NATS the processes use (embedded or external), and the relay run on the settings' `nats` section."""

from __future__ import annotations

import structlog

from api.runtime.embedded_nats import EmbeddedNats, running_embedded_nats, start_embedded_nats
from api.settings import Settings
from projections.relay.config import RelayConfig
from projections.relay.metrics import RelayMetrics
from projections.relay.relay import Relay, RelayConflictError

_log = structlog.get_logger("catalog_es.relay")


def nats_url(settings: Settings, *, start: bool) -> tuple[str | None, EmbeddedNats | None]:
    """The NATS to use: `nats.url`; else in embedded mode the embedded server (started if `start`, or
    joined when `catalog-es serve` runs on the data dir); else none (NATS switched off)."""
    if not settings.nats.enabled:
        return None, None
    if settings.nats.url:
        return settings.nats.url, None
    if settings.pg_dsn:
        return None, None
    if not start:
        return running_embedded_nats(settings.data_path), None
    server = start_embedded_nats(settings.data_path, port=settings.nats.embedded_port)
    return server.url, server


async def run_relay(dsn: str, config: RelayConfig, metrics: RelayMetrics) -> None:
    """Run the relay until cancelled; a conflict (another catalog's stream) or a bug is logged and ends it."""
    try:
        await Relay(dsn, config, metrics=metrics).run()
    except RelayConflictError as exc:
        _log.error("relay.stopped", error=str(exc))
        raise
    except Exception:
        _log.exception("relay.failed")
        raise
