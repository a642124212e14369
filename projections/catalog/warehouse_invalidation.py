"""Keeps a process's warehouse cache coherent with the log: what a commit changed is dropped before it is served.

Every append notifies `catalog_events` (in commit order). One connection LISTENs, so a change is dropped at
once even while no request comes (only a notification that may name a warehouse stream is looked into); a second
one reads, in one query, the log head and which warehouse streams changed since the last look. A request that
would use a cached row first waits for one such look that started after it arrived (concurrent requests share
one, so it costs one small query per burst, never a pooled connection): a change committed through any replica
before the request is in force for it, whatever the notification's delay.
While either connection is down the cache holds nothing (every request reads the database). A request waits for
the look at most `wait_seconds` (the pool timeout): past it the database counts as unavailable (503).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import psycopg
import structlog

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import NOTIFY_CHANNEL, log_head
from catalog_es.store.notices import parse_notice
from projections.catalog.warehouse_cache import WarehouseCache

_log = structlog.get_logger("catalog_es.warehouse_cache")

_WAREHOUSE = "warehouse"  # the stream kind
_WAREHOUSE_STREAM = f"{_WAREHOUSE}-"
_LOOK = (  # one statement, one snapshot: the head and the warehouse streams changed up to it
    "SELECT c.position, ARRAY(SELECT DISTINCT e.stream_id FROM catalog_events e"
    " WHERE e.global_position > %s AND e.global_position <= c.position AND e.stream_id LIKE 'warehouse-%%')"
    " FROM catalog_event_counter c"
)


class WarehouseInvalidation:
    """Follows the log for one `WarehouseCache` until cancelled (reconnecting after a loss)."""

    def __init__(
        self, dsn: str, cache: WarehouseCache, *, wait_seconds: float = 30.0, retry_seconds: float = 1.0
    ) -> None:
        self._dsn, self._cache, self._retry_seconds = dsn, cache, retry_seconds
        self._wait_seconds = wait_seconds
        self._waiting: list[asyncio.Future[None]] = []
        self._wakeup = asyncio.Event()

    async def run(self) -> None:
        while True:
            try:
                await self._follow()
            except (psycopg.Error, OSError) as exc:
                _log.warning("warehouse_cache.follow_lost", error=str(exc))
            finally:
                self._cache.follow(None)
                self._release()
            await asyncio.sleep(self._retry_seconds)

    async def sync(self) -> None:
        """Return once a look at the log that started after this call has dropped what changed.

        Raises:
            psycopg.OperationalError: no look finished within `wait_seconds` (the database hangs).
        """
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self._wakeup.set()
        try:
            await asyncio.wait_for(waiter, self._wait_seconds)
        except TimeoutError:
            raise psycopg.OperationalError("the look at the catalog log did not finish in time") from None

    async def _follow(self) -> None:
        async with (
            await _connect(self._dsn, "listen") as listening,
            await _connect(self._dsn, "lookup") as looking,
        ):
            await listening.execute(f"LISTEN {NOTIFY_CHANNEL}")
            seen = await log_head(looking)
            self._cache.follow(self.sync)  # anything committed before is read from the database, nothing cached
            listener = asyncio.create_task(self._listen(listening))
            try:
                while True:
                    await self._wait(listener)
                    if listener.done():
                        listener.result()  # the listening connection failed: raise its error
                    batch, self._waiting = self._waiting, []
                    try:
                        head, changed = await _look(looking, seen)
                        if head > seen:
                            self._cache.drop(changed)
                            seen = head
                    except BaseException:
                        # `run` releases them once the cache stopped trusting this follower (they once waited
                        # forever: a request in flight when the database went down never answered).
                        self._waiting = batch + self._waiting
                        raise
                    for waiter in batch:
                        if not waiter.done():
                            waiter.set_result(None)
            finally:
                listener.cancel()
                with contextlib.suppress(asyncio.CancelledError, psycopg.Error, OSError):
                    await listener

    async def _listen(self, conn: Connection) -> None:
        async for notify in conn.notifies():
            if parse_notice(notify.payload).may_change(_WAREHOUSE):
                self._wakeup.set()
        raise psycopg.OperationalError("the listening connection closed")

    async def _wait(self, listener: asyncio.Task[None]) -> None:
        """Until a notification or a request arrives, or the listener ends."""
        if not self._wakeup.is_set():
            waiting = asyncio.create_task(self._wakeup.wait())
            try:
                await asyncio.wait({waiting, listener}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiting.cancel()
        self._wakeup.clear()

    def _release(self) -> None:
        """Waiting requests go on: the cache no longer follows, so they read the database."""
        batch, self._waiting = self._waiting, []
        for waiter in batch:
            if not waiter.done():
                waiter.set_result(None)


async def _connect(dsn: str, role: str) -> Connection:
    return await psycopg.AsyncConnection.connect(dsn, autocommit=True, application_name=f"catalog-es cache {role}")


async def _look(conn: Connection, after: int) -> tuple[int, list[uuid.UUID]]:
    """The log head, and the warehouses whose streams changed after position `after` up to it."""
    cursor = await conn.execute(_LOOK, (after,))
    row = await cursor.fetchone()
    if row is None:
        return 0, []
    changed = []
    for stream_id in row[1]:
        with contextlib.suppress(ValueError):
            changed.append(uuid.UUID(str(stream_id).removeprefix(_WAREHOUSE_STREAM)))
    return int(row[0]), changed
