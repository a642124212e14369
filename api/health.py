"""GET /health: 200 when the database answers, 503 otherwise (no auth); details include projector lag."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import psycopg
from litestar import Response, get
from litestar.datastructures import State

from projections.projection_registry import all_statuses
from projections.projector_checkpoint import ProjectorStatus


class Health(msgspec.Struct):
    status: str
    database: str
    projectors: list[ProjectorStatus] = msgspec.field(default_factory=list)


@get("/health")
async def health(state: State) -> Response[Health]:
    try:
        async with state.ctx.store.connection() as conn:
            await conn.execute("SELECT 1")
            projectors = await all_statuses(conn, datetime.now(UTC))
    except (psycopg.Error, TimeoutError) as exc:
        return Response(Health(status="unavailable", database=str(exc)), status_code=503)
    return Response(Health(status="ok", database="ok", projectors=projectors), status_code=200)
