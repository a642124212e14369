"""A serving process's one look at the log for its caches: which streams changed since the last look, by kind.

One `LogFollower` connection (LISTEN, poll, reconnect) per process serves every subscriber: each look (on a
notification, on the poll, or on demand) reads the log head and the streams of the subscribers' kinds changed in
(seen, head], and hands each subscriber its own. A subscriber (re)starts at the head when the connection is made
(reload or drop everything) and is told when it is lost (trust nothing until the next start).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from typing import Protocol

import psycopg

from catalog_es.events.base import split_stream_id
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import log_head
from projections.follow import LogFollower

APPLICATION_NAME = "catalog-es changes"
# The head and the streams of the followed kinds changed up to it since `seen`, in one statement (one round trip per
# look; with nothing new the range is empty).
_LOOK = (
    "SELECT c.position, ARRAY(SELECT DISTINCT e.stream_id FROM catalog_events e"
    " WHERE e.global_position > %s AND e.global_position <= c.position AND ({})) FROM catalog_event_counter c"
)


class StreamSubscriber(Protocol):
    """What a cache fed by the log implements."""

    @property
    def kinds(self) -> tuple[str, ...]:
        """The `stream_kind`s of the streams it takes (`warehouse`, `service-principal`)."""
        ...

    async def start(self, conn: Connection) -> None:
        """Following (again) from now on: reload or drop everything (anything committed before the look is in)."""
        ...

    async def changed(self, conn: Connection, stream_ids: Sequence[str]) -> None:
        """These streams of its kinds changed since the last look (never empty)."""
        ...

    def lost(self) -> None:
        """The log is not followed any more: trust nothing until `start` is called again."""
        ...


def stream_entity(stream_id: str, kind: str) -> uuid.UUID | None:
    """The entity id of a `<kind>-<uuid>` stream, else None (kinds hold dashes: never split at the first one)."""
    stream_kind, entity_id = split_stream_id(stream_id)
    if stream_kind != kind:
        return None
    try:
        return uuid.UUID(entity_id)
    except ValueError:
        return None


class ChangedStreams:
    """Follows the log for its subscribers until cancelled; `look()` asks for a look on demand."""

    def __init__(self, dsn: str, *, poll_seconds: float = 1.0, retry_seconds: float = 1.0) -> None:
        self._follower = LogFollower(dsn, APPLICATION_NAME, poll_seconds=poll_seconds, retry=(psycopg.Error, OSError))
        self._retry_seconds = retry_seconds
        self._subscribers: list[StreamSubscriber] = []
        self._waiting: list[asyncio.Future[None]] = []
        self._wakeup = asyncio.Event()
        self._following = False
        # The head through which every subscriber was handed what changed (None while nothing is followed).
        self.seen: int | None = None
        self.started = asyncio.Event()  # set once every subscriber started the first time (first load before serving)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def subscribe(self, subscriber: StreamSubscriber) -> None:
        """Before `run`: a subscriber added later would miss its start."""
        self._subscribers.append(subscriber)

    async def run(self) -> None:
        await self._follower.run(self._follow, delay=lambda: self._retry_seconds)

    async def look(self) -> None:
        """Return once a look at the log that started after this call handed out what changed, or at once while
        nothing is followed (the subscribers trust nothing then). Concurrent calls share one look."""
        if not self._following:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        self._wakeup.set()
        await waiter

    async def _follow(self, conn: Connection) -> None:
        try:
            seen = await log_head(conn)
            for subscriber in self._subscribers:
                await subscriber.start(conn)
            self._following, self.seen = True, seen
            self.started.set()
            while True:
                notice = await self._follower.wait_notice(conn, wakeup=self._wakeup)
                if notice is not None and not self._waiting and not any(map(notice.may_change, self._kinds())):
                    continue  # a commit to streams nobody here follows: the next look covers its range too
                self._wakeup.clear()
                batch, self._waiting = self._waiting, []
                try:
                    seen = self.seen = await self._look(conn, seen)
                except BaseException:
                    self._waiting = batch + self._waiting  # released below once nothing is trusted
                    raise
                _release(batch)
        finally:
            # Also when cancelled: a request in flight when the connection went must not wait forever.
            self._following, self.seen = False, None
            for subscriber in self._subscribers:
                subscriber.lost()
            batch, self._waiting = self._waiting, []
            _release(batch)

    def _kinds(self) -> list[str]:
        return sorted({kind for subscriber in self._subscribers for kind in subscriber.kinds})

    async def _look(self, conn: Connection, seen: int) -> int:
        kinds = self._kinds()
        if not kinds:
            return max(await log_head(conn), seen)
        query = _LOOK.format(" OR ".join(["e.stream_id LIKE %s"] * len(kinds)))
        cursor = await conn.execute(query.encode(), (seen, *(_like_prefix(kind) for kind in kinds)))
        row = await cursor.fetchone()
        if row is None:
            return seen
        head, changed_ids = int(row[0]), row[1]
        if head <= seen:
            return seen
        changed = [str(stream_id) for stream_id in changed_ids]
        for subscriber in self._subscribers:
            own = [s for s in changed if any(stream_entity(s, kind) is not None for kind in subscriber.kinds)]
            if own:
                await subscriber.changed(conn, own)
        return head


def _like_prefix(kind: str) -> str:
    escaped = kind.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{escaped}-%"


def _release(waiters: list[asyncio.Future[None]]) -> None:
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(None)
