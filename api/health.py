"""GET /health: 200 when the database answers, 503 otherwise (no auth); details include projector lag."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import psycopg
import structlog
from litestar import Response, get
from litestar.datastructures import State

from api.auth.rules import anyone, requires
from api.container import services
from api.errors import RETRY_AFTER_SECONDS
from catalog_es.store.database import check_idle_connections
from projections.checkpoints import ProjectorStatus
from projections.registry import all_statuses

_log = structlog.get_logger(__name__)


class Health(msgspec.Struct):
    status: str
    database: str
    projectors: list[ProjectorStatus] = msgspec.field(default_factory=list)


@get("/health", opt=requires(anyone))
async def health(state: State) -> Response[Health]:
    """Unhealthy within the pool's checkout timeout while the database is down; the driver's text stays in the log."""
    try:
        async with services(state).ctx.store.connection() as conn:
            await conn.execute("SELECT 1")
            projectors = await all_statuses(conn, datetime.now(UTC))
    except (psycopg.Error, TimeoutError) as exc:
        _log.warning("health: database unavailable", error=str(exc), error_type=type(exc).__name__)
        check_idle_connections(services(state).ctx.store.pool)
        return Response(
            Health(status="unavailable", database="unavailable"),
            status_code=503,
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    return Response(Health(status="ok", database="ok", projectors=projectors), status_code=200)
