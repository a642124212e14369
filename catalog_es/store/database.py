"""PostgreSQL connections: an async pool whose JSON goes through msgspec."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import psycopg
from psycopg.types.json import set_json_dumps, set_json_loads
from psycopg_pool import AsyncConnectionPool

Connection = psycopg.AsyncConnection[Any]
Pool = AsyncConnectionPool[Connection]

set_json_dumps(msgspec.json.encode)
set_json_loads(msgspec.json.decode)

_checks: dict[int, asyncio.Task[None]] = {}


# How long one series of reconnection attempts lasts. psycopg_pool doubles the pause between attempts (1, 2, 4 …
# 64 s) for up to this long: with its default of 5 minutes, the next attempt after a long outage could come a
# minute after the database was back. Past this the series ends; the next request that waits starts a new one at
# once, so the pool reconnects within a few seconds of the database whatever the outage's length.
RECONNECT_SERIES_SECONDS = 4.0
_OPEN_SECONDS = 30.0


async def open_pool(dsn: str, *, min_size: int = 2, max_size: int = 16, checkout_timeout: float = 30.0) -> Pool:
    """Open an autocommit pool; writes use explicit transactions.

    `checkout_timeout` bounds the wait for a connection: while the database is down a request fails
    after that long (psycopg_pool.PoolTimeout) instead of hanging; the pool keeps reconnecting itself, in short
    series of attempts (`RECONNECT_SERIES_SECONDS`).
    """
    pool: Pool = AsyncConnectionPool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True},
        timeout=checkout_timeout,
        reconnect_timeout=_OPEN_SECONDS,
        open=False,
    )
    await pool.open(wait=True, timeout=_OPEN_SECONDS)  # a database still starting gets the whole while
    pool.reconnect_timeout = RECONNECT_SERIES_SECONDS  # read by every series started from now on
    return pool


def check_idle_connections(pool: Pool) -> None:
    """Test the pool's idle connections in the background (one check at a time per pool).

    Called when the database failed a request: connections an outage broke are replaced by the pool
    instead of failing the first requests after the database is back.
    """
    if id(pool) in _checks:
        return
    task = asyncio.get_running_loop().create_task(pool.check())
    _checks[id(pool)] = task

    def forget(done: asyncio.Task[None]) -> None:
        _checks.pop(id(pool), None)
        if not done.cancelled():
            done.exception()  # retrieved: a check on a closing pool may fail, and that is fine

    task.add_done_callback(forget)
