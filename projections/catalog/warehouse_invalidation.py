"""Keeps a process's warehouse cache coherent with the log: what a commit changed is dropped before it is served.

A subscriber of the process's `ChangedStreams` (one listening connection for every cache): a notification drops a
changed warehouse at once even while no request comes. A request that would use a cached row first waits for one
look at the log that started after it arrived (concurrent requests share one, so it costs one small query per
burst, never a pooled connection): a change committed through any replica before the request is in force for it,
whatever the notification's delay. While the log is not followed the cache holds nothing (every request reads the
database). A request waits for the look at most `wait_seconds` (the pool timeout): past it the database counts as
unavailable (503).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import psycopg

from catalog_es.events.catalog import WarehouseEvent
from catalog_es.store.database import Connection
from projections.catalog.warehouse_cache import WarehouseCache
from projections.changed_streams import ChangedStreams, stream_entity

_KIND = WarehouseEvent.stream_kind


class WarehouseInvalidation:
    """Drops the warehouses the log says changed from one `WarehouseCache`."""

    kinds = (_KIND,)

    def __init__(self, changes: ChangedStreams, cache: WarehouseCache, *, wait_seconds: float = 30.0) -> None:
        self._changes, self._cache, self._wait_seconds = changes, cache, wait_seconds

    async def sync(self) -> None:
        """Return once a look at the log that started after this call has dropped what changed.

        Raises:
            psycopg.OperationalError: no look finished within `wait_seconds` (the database hangs).
        """
        try:
            async with asyncio.timeout(self._wait_seconds):  # no task per request, as `wait_for` would start
                await self._changes.look()
        except TimeoutError:
            raise psycopg.OperationalError("the look at the catalog log did not finish in time") from None

    async def start(self, conn: Connection) -> None:
        del conn
        # Anything committed before is read from the database, nothing cached.
        self._cache.follow(self.sync, lambda: self._changes.seen)

    async def changed(self, conn: Connection, stream_ids: Sequence[str]) -> None:
        del conn
        self._cache.drop(w for s in stream_ids if (w := stream_entity(s, _KIND)) is not None)

    def lost(self) -> None:
        self._cache.follow(None)
