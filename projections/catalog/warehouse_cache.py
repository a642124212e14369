"""Warehouse rows by id, kept for a few seconds: a catalog request resolves its `{prefix}` without a query.

Every warehouse event of this process drops its entry (the store calls `forget` like an inline projection),
so a change made here is seen by the next request. Other processes: with `ttl=None` the log invalidates
(projections/catalog/warehouse_invalidation.py follows the log: a request first waits until every commit made
before it arrived was looked at; no row is cached while nothing follows); with a `ttl`, within about `ttl` s. An
expired row is served while one background lookup refreshes it, and concurrent misses share one lookup: a
request holding a pooled connection never waits for a second one here, except on the very first lookup.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence

from cachetools import LRUCache

from catalog_es.state import WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent

_WAREHOUSE_STREAM = "warehouse-"

Loader = Callable[[], Awaitable[WarehouseRow | None]]


class WarehouseCache:
    def __init__(
        self, ttl: float | None = 2.0, clock: Callable[[], float] = time.monotonic, max_rows: int = 10_000
    ) -> None:
        self._ttl = ttl
        self._sync: Callable[[], Awaitable[None]] | None = None  # ttl=None: rows are cached only while followed
        self._seen: Callable[[], int | None] = _nothing_seen  # the log head through which the follower dropped rows
        self._clock = clock
        self._rows: LRUCache[uuid.UUID, tuple[float, WarehouseRow]] = LRUCache(max_rows)  # the busiest warehouses
        self._loading: dict[uuid.UUID, asyncio.Task[WarehouseRow | None]] = {}
        self._forgotten = 0  # counts `forget` calls: a lookup that started before one is not kept

    async def get(self, warehouse_id: uuid.UUID, load: Loader) -> WarehouseRow | None:
        """The cached row (refreshed in the background once expired), else `load()`; misses are never cached."""
        if self._ttl is None:
            if self._sync is None:
                return await load()
            await self._sync()
        cached = self._rows.get(warehouse_id)
        if cached is None:
            return await self._load(warehouse_id, load)
        if self._ttl is not None and self._clock() - cached[0] >= self._ttl and warehouse_id not in self._loading:
            task = self._start(warehouse_id, load)
            task.add_done_callback(_ignore_failure)
        return cached[1]

    async def forget(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        """Drop the warehouses these events change (an inline projector: runs in the append transaction)."""
        del conn
        for event in events:
            if event.stream_id.startswith(_WAREHOUSE_STREAM):
                self._forgotten += 1
                with contextlib.suppress(ValueError):
                    self._rows.pop(uuid.UUID(event.stream_id.removeprefix(_WAREHOUSE_STREAM)), None)

    def unconfirmed(self, warehouse_id: uuid.UUID) -> WarehouseRow | None:
        """The row cached now while the log is followed, without waiting for a look: for a request that reads the
        log head in its own statement and then asks `confirmed` (None: take `get`)."""
        if self._ttl is not None or self._sync is None:
            return None
        cached = self._rows.get(warehouse_id)
        return None if cached is None else cached[1]

    def confirmed(self, row: WarehouseRow, head: int) -> bool:
        """Whether a row `unconfirmed` gave is in force for a request whose statement, made after it arrived, read
        the log head `head`: the follower handed out every change up to that head and the row is still cached
        (so nothing committed before the request changed it), as `get`'s look would have made sure."""
        seen = self._seen() if self._sync is not None else None
        if seen is None or seen < head:
            return False
        cached = self._rows.get(row.id)
        return cached is not None and cached[1] is row

    def follow(self, sync: Callable[[], Awaitable[None]] | None, seen: Callable[[], int | None] | None = None) -> None:
        """Start (`sync`: returns once every earlier commit reached `drop`; `seen`: the log head through which
        it did, for `confirmed`) or stop trusting a log follower.

        Either way every row cached so far is dropped.
        """
        self._sync, self._seen = sync, seen or _nothing_seen
        self._forgotten += 1
        self._rows.clear()

    def drop(self, warehouse_ids: Iterable[uuid.UUID]) -> None:
        """Forget warehouses another process changed."""
        for warehouse_id in warehouse_ids:
            self._forgotten += 1
            self._rows.pop(warehouse_id, None)

    async def _load(self, warehouse_id: uuid.UUID, load: Loader) -> WarehouseRow | None:
        task = self._loading.get(warehouse_id) or self._start(warehouse_id, load)
        return await asyncio.shield(task)

    def _start(self, warehouse_id: uuid.UUID, load: Loader) -> asyncio.Task[WarehouseRow | None]:
        async def run() -> WarehouseRow | None:
            started, forgotten = self._clock(), self._forgotten
            try:
                row = await load()
            finally:
                self._loading.pop(warehouse_id, None)
            if row is None:
                self._rows.pop(warehouse_id, None)
            elif forgotten == self._forgotten:
                self._rows[warehouse_id] = (started, row)
            return row

        task = asyncio.ensure_future(run())
        self._loading[warehouse_id] = task
        return task


def _ignore_failure(task: asyncio.Task[WarehouseRow | None]) -> None:
    """A failed background refresh keeps the old row; the next request past the TTL tries again."""
    if not task.cancelled():
        task.exception()


def _nothing_seen() -> int | None:
    return None
