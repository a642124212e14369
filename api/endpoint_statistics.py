"""Endpoint statistics: every API call counted by route, status, project, warehouse and hour in memory, and
added to Postgres every few seconds (and before the statistics route reads), so replicas share one table."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from litestar import Litestar
from litestar.types import Scope

from api.lifespans import in_background
from catalog_es.identifiers import NIL_PROJECT_ID
from catalog_es.store.database import Pool
from catalog_es.store.endpoint_statistics import EndpointCount, add_counts

_COUNTED = ("/catalog/", "/management/")  # the two APIs; health, metrics, docs and the console are not counted
_Key = tuple[uuid.UUID, uuid.UUID | None, str, int, datetime]  # project, warehouse, route, status, hour


@dataclass
class _Tally:
    count: int
    first_at: datetime
    last_at: datetime


def _uuid(value: object) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value).partition("@")[0])  # a catalog prefix may carry an as-of position
    except ValueError:
        return None


@lru_cache(maxsize=4096)  # the routes and warehouses in use: a call parses no UUID
def _labels(
    method: str, template: str, warehouse: object, project_header: bytes | None
) -> tuple[uuid.UUID, uuid.UUID | None, str]:
    """A call's project (the `x-project-id` header's, else the nil project), warehouse and route."""
    project = None if project_header is None else _uuid(project_header.decode("latin-1"))
    return project or NIL_PROJECT_ID, _uuid(warehouse), f"{method} {template}"


class EndpointStatistics:
    """The counts of this process not yet added to the table."""

    def __init__(self, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._clock = clock
        self._pending: dict[_Key, _Tally] = {}
        self._lock = asyncio.Lock()

    def record(self, scope: Scope, status: int, headers: dict[bytes, bytes] | None = None) -> None:
        """Count one answered call (`headers`: the request's, as a dict, when the caller has it already)."""
        template = str(scope.get("path_template") or "")
        if not template.startswith(_COUNTED):
            return
        params = scope.get("path_params") or {}
        if headers is None:
            headers = dict(scope.get("headers") or [])
        project, warehouse, route = _labels(
            str(scope.get("method", "")),
            template,
            params.get("prefix") or params.get("warehouse_id") or "",
            headers.get(b"x-project-id"),
        )
        now = self._clock()
        key = (project, warehouse, route, status, now.replace(minute=0, second=0, microsecond=0))
        entry = self._pending.get(key)
        if entry is None:
            self._pending[key] = _Tally(1, now, now)
        else:  # `_merge` of one call, without building its tally
            entry.count += 1
            if now < entry.first_at:
                entry.first_at = now
            elif now > entry.last_at:
                entry.last_at = now

    async def flush(self, pool: Pool) -> None:
        """Add the pending counts in one transaction; on failure they are kept for the next flush."""
        async with self._lock:
            pending, self._pending = self._pending, {}
            if not pending:
                return
            counts = [EndpointCount(*key, tally.count, tally.first_at, tally.last_at) for key, tally in pending.items()]
            try:
                async with pool.connection() as conn, conn.transaction():
                    await add_counts(conn, counts)
            except Exception:
                for key, value in pending.items():  # merged back: nothing counted is lost to a failed flush
                    self._merge(key, value)
                raise

    def _merge(self, key: _Key, tally: _Tally) -> None:
        entry = self._pending.get(key)
        if entry is None:
            self._pending[key] = tally
        else:
            entry.count += tally.count
            entry.first_at, entry.last_at = min(entry.first_at, tally.first_at), max(entry.last_at, tally.last_at)


def flushing(
    statistics: EndpointStatistics, seconds: float
) -> Callable[[Litestar], contextlib.AbstractAsyncContextManager[None]]:
    """A lifespan adding the counts every `seconds` while the app runs, and once more when it stops."""

    async def flush(app: Litestar) -> None:
        with contextlib.suppress(Exception):  # the database away: the counts wait for the next round
            await statistics.flush(app.state.services.pool)

    async def loop(app: Litestar) -> None:
        try:
            while True:
                await asyncio.sleep(seconds)
                await flush(app)
        finally:
            await flush(app)

    return in_background(loop)
