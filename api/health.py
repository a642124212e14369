"""GET /health: 200 when the database answers, 503 otherwise (no auth)."""

from __future__ import annotations

import msgspec
import psycopg
from litestar import Response, get
from litestar.datastructures import State


class Health(msgspec.Struct):
    status: str
    database: str


@get("/health")
async def health(state: State) -> Response[Health]:
    try:
        async with state.ctx.store.connection() as conn:
            await conn.execute("SELECT 1")
    except (psycopg.Error, TimeoutError) as exc:
        return Response(Health(status="unavailable", database=str(exc)), status_code=503)
    return Response(Health(status="ok", database="ok"), status_code=200)
