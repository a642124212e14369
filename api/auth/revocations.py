"""Feeds a process's `RevocationList` from the log: LISTEN for appends, reload when a service principal changed.

Loaded once before the app serves; afterwards a notification that may name a service principal's stream
(catalog_es/store/notices.py) triggers a look at the appended range for `service-principal-*` streams (an index
range on the log position) and, only if one changed, a reload of the small `authz_service_principals` projection.
While the connection is lost the list stops `following`, and catalog-issued tokens are refused until it is back
(fail closed).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import psycopg
import structlog

from api.auth.local_tokens import RevocationList
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import NOTIFY_CHANNEL, log_head
from catalog_es.store.notices import parse_notice
from projections.permissions.queries import token_floors

_log = structlog.get_logger("catalog_es.auth")

_SERVICE_PRINCIPAL = "service-principal"  # the stream kind
_CHANGED = (
    "SELECT EXISTS (SELECT 1 FROM catalog_events WHERE global_position > %s AND global_position <= %s"
    " AND stream_id LIKE 'service-principal-%%')"
)


async def _load(conn: Connection, revocations: RevocationList) -> int:
    """The floors and the log head they reflect (one snapshot: the projection is written with the log)."""
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        head = await log_head(conn)
        revocations.replace(await token_floors(conn))
    return head


async def follow(dsn: str, revocations: RevocationList, ready: asyncio.Event, retry_seconds: float = 1.0) -> None:
    """Until cancelled; `ready` is set after the first load."""
    while True:
        try:
            async with (
                await psycopg.AsyncConnection.connect(
                    dsn, autocommit=True, application_name="catalog-es revocations"
                ) as listening,
                await psycopg.AsyncConnection.connect(
                    dsn, autocommit=True, application_name="catalog-es revocations"
                ) as looking,
            ):
                await listening.execute(f"LISTEN {NOTIFY_CHANNEL}")
                seen = await _load(looking, revocations)
                ready.set()
                async for notify in listening.notifies():
                    if not parse_notice(notify.payload).may_change(_SERVICE_PRINCIPAL):
                        continue  # nothing to look for: the next look covers this commit's range too
                    head = await log_head(looking)
                    if head <= seen:
                        continue
                    cursor = await looking.execute(_CHANGED, (seen, head))
                    row = await cursor.fetchone()
                    seen = await _load(looking, revocations) if row and row[0] else head
        except (psycopg.Error, OSError) as exc:
            _log.warning("revocations.follow_lost", error=str(exc))
        finally:
            revocations.following = False
        await asyncio.sleep(retry_seconds)


def follow_revocations(
    dsn: str, revocations: RevocationList | None
) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """A Litestar lifespan step; waits (up to 10 s) for the first load so the first requests are judged."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        if revocations is None:
            yield
            return
        ready = asyncio.Event()
        task = asyncio.create_task(follow(dsn, revocations, ready))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ready.wait(), 10.0)
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return lifespan
