"""PostgreSQL connections: an async pool whose JSON goes through msgspec."""

from __future__ import annotations

from typing import Any

import msgspec
import psycopg
from psycopg.types.json import set_json_dumps, set_json_loads
from psycopg_pool import AsyncConnectionPool

Connection = psycopg.AsyncConnection[Any]
Pool = AsyncConnectionPool[Connection]

set_json_dumps(msgspec.json.encode)
set_json_loads(msgspec.json.decode)


async def open_pool(dsn: str, *, min_size: int = 2, max_size: int = 16) -> Pool:
    """Open an autocommit pool; writes use explicit transactions."""
    pool: Pool = AsyncConnectionPool(dsn, min_size=min_size, max_size=max_size, kwargs={"autocommit": True}, open=False)
    await pool.open(wait=True, timeout=30)
    return pool
