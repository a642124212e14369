"""The event store: append CloudEvents atomically, per-stream optimistic concurrency, inline projections."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from functools import lru_cache
from typing import Any

import msgspec
from psycopg import AsyncCursor
from psycopg.types.json import Jsonb

from catalog_es.clock import Clock, IdSource
from catalog_es.database import Connection, Pool
from catalog_es.events import Event, Json, decode_event, event_data

NOTIFY_CHANNEL = "catalog_events"

_COLUMNS = (
    "global_position, id, source, type, subject, time, datacontenttype, data, extensions,"
    " stream_id, stream_version, commit_id"
)


class RecordedEvent(msgspec.Struct, frozen=True):
    """An event as stored: CloudEvents attributes plus its place in the log and in its stream."""

    position: int
    id: uuid.UUID
    source: str
    type: str
    subject: str | None
    time: datetime
    datacontenttype: str
    data: Json
    extensions: Json
    stream_id: str
    stream_version: int
    commit_id: uuid.UUID

    def decode(self) -> Event:
        return decode_event(self.type, self.data)


class EventMetadata(msgspec.Struct, frozen=True):
    """Who caused the events and in which request; recorded as CloudEvents extension attributes."""

    actor: str = "anonymous"
    request_id: str | None = None

    def extensions(self) -> Json:
        extensions: Json = {"actor": self.actor}
        if self.request_id:
            extensions["requestid"] = self.request_id
        return extensions


class StreamVersionConflictError(Exception):
    """Someone appended to the stream since its state was read."""

    def __init__(self, stream_id: str, expected: int, actual: int) -> None:
        super().__init__(f"Stream {stream_id} is at version {actual}, expected {expected}")
        self.stream_id, self.expected, self.actual = stream_id, expected, actual


InlineProjector = Callable[[Connection, Sequence[RecordedEvent]], Awaitable[None]]


class Transaction:
    """One write transaction: events appended here commit together with the inline projections."""

    def __init__(self, conn: Connection, head: AsyncCursor[Any], commit_id: uuid.UUID, time: datetime) -> None:
        self.conn = conn
        self._head = head  # the locked counter row, read when the first events are recorded
        self._commit_id = commit_id
        self._time = time
        self._stream_versions: dict[str, int] = {}
        self.pending: list[tuple[Event, int]] = []

    async def stream_version(self, stream_id: str) -> int:
        """The stream's current version, including what this transaction appended."""
        if stream_id not in self._stream_versions:
            cursor = await self.conn.execute(
                "SELECT coalesce(max(stream_version), 0) FROM catalog_events WHERE stream_id = %s",
                (stream_id,),
            )
            row = await cursor.fetchone()
            self._stream_versions[stream_id] = int(row[0]) if row else 0
        return self._stream_versions[stream_id]

    async def append(self, event: Event, *, expected_version: int) -> None:
        """Append one event to its stream, which must still be at `expected_version`.

        Raises:
            StreamVersionConflictError: the stream moved on since it was read.
        """
        actual = await self.stream_version(event.stream_id)
        if actual != expected_version:
            raise StreamVersionConflictError(event.stream_id, expected_version, actual)
        self._stream_versions[event.stream_id] = actual + 1
        self.pending.append((event, actual + 1))

    async def flush(self, source: str, metadata: EventMetadata, ids: IdSource) -> list[RecordedEvent]:
        row = await self._head.fetchone()
        if row is None:
            raise RuntimeError("The event store is not migrated: run `catalog-es migrate`")
        position = int(row[0])
        recorded = [
            RecordedEvent(
                position=position + offset,
                id=ids.new_id(),
                source=source,
                type=event.type_name,
                subject=event.stream_id,
                time=self._time,
                datacontenttype="application/json",
                data=event_data(event),
                extensions=metadata.extensions(),
                stream_id=event.stream_id,
                stream_version=version,
                commit_id=self._commit_id,
            )
            for offset, (event, version) in enumerate(self.pending, start=1)
        ]
        if not recorded:
            return recorded
        for start in range(0, len(recorded), _EVENTS_PER_STATEMENT):  # PostgreSQL takes 65,535 parameters
            chunk = recorded[start : start + _EVENTS_PER_STATEMENT]
            params: list[Any] = []
            for e in chunk:
                params += (e.position, e.id, e.source, e.type, e.subject, e.time, e.datacontenttype)
                params += (Jsonb(e.data), Jsonb(e.extensions), e.stream_id, e.stream_version, e.commit_id)
            head = chunk[-1].position
            await self.conn.execute(_append_statement(len(chunk)), (*params, head, NOTIFY_CHANNEL, str(head)))
        return recorded


_EVENTS_PER_STATEMENT = 1000


@lru_cache(maxsize=64)
def _append_statement(count: int) -> bytes:
    """Insert `count` events, advance the counter and notify in one statement: one round trip per commit."""
    row = "(" + ", ".join(["%s"] * len(_COLUMNS.split(","))) + ")"
    return (
        f"WITH appended AS (INSERT INTO catalog_events ({_COLUMNS}) VALUES {', '.join([row] * count)}),"
        " advanced AS (UPDATE catalog_event_counter SET position = %s)"
        " SELECT pg_notify(%s, %s)"
    ).encode()


class EventStore:
    """Appends and reads the catalog's event log."""

    def __init__(
        self,
        pool: Pool,
        *,
        clock: Clock,
        ids: IdSource,
        source: str = "/catalog-es",
        inline_projectors: Sequence[InlineProjector] = (),
    ) -> None:
        self.pool = pool
        self._clock = clock
        self._ids = ids
        self._source = source
        self._inline_projectors = tuple(inline_projectors)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection for reads outside any write transaction."""
        async with self.pool.connection() as conn:
            yield conn

    @asynccontextmanager
    async def transaction(self, metadata: EventMetadata) -> AsyncIterator[Transaction]:
        """Open a write transaction; on a clean exit its events are appended and projected inline.

        The counter row is locked first, so write transactions are serialised: checks made inside
        see every earlier commit, and positions are gap-free in commit order.
        """
        # Pipeline mode: statements whose results nobody reads (the append, the projections, COMMIT) travel
        # together, and the lock's answer is read only at flush, so it shares the handler's first round trip:
        # the counter row stays locked for fewer round trips.
        async with self.pool.connection() as conn, conn.pipeline(), conn.transaction():
            head = await conn.execute("SELECT position FROM catalog_event_counter FOR UPDATE")
            tx = Transaction(conn, head, self._ids.new_id(), self._clock.now())
            yield tx
            recorded = await tx.flush(self._source, metadata, self._ids)
            for project in self._inline_projectors:
                await project(conn, recorded)

    async def read(self, *, after: int = 0, limit: int | None = None, last: int | None = None) -> list[RecordedEvent]:
        """Events after a position in log order; with `last`, only the newest that many."""
        async with self.pool.connection() as conn:
            return await read_events(conn, after=after, limit=limit, last=last)

    async def head(self) -> int:
        async with self.pool.connection() as conn:
            cursor = await conn.execute("SELECT position FROM catalog_event_counter")
            row = await cursor.fetchone()
            return int(row[0]) if row else 0


def check_contiguous(after: int, events: Sequence[RecordedEvent]) -> None:
    """Positions are gap-free: a batch read after `after` must be `after + 1, after + 2, ...`.

    Raises:
        RuntimeError: the log has a hole, which is a bug, never something to skip.
    """
    if events and (events[0].position != after + 1 or events[-1].position != after + len(events)):
        raise RuntimeError(f"The log has a hole after position {after}: a bug, not something to skip")


async def read_events(
    conn: Connection, *, after: int = 0, limit: int | None = None, last: int | None = None
) -> list[RecordedEvent]:
    """Read events in log order from any connection (also a rebuild's)."""
    if last is not None:
        query = (
            f"SELECT * FROM (SELECT {_COLUMNS} FROM catalog_events WHERE global_position > %s"
            " ORDER BY global_position DESC LIMIT %s) newest ORDER BY global_position"
        )
        params: tuple[Any, ...] = (after, last)
    else:
        query = f"SELECT {_COLUMNS} FROM catalog_events WHERE global_position > %s ORDER BY global_position"
        params = (after,)
        if limit is not None:
            query += " LIMIT %s"
            params = (after, limit)
    cursor = await conn.execute(query.encode(), params)
    return [RecordedEvent(*row) for row in await cursor.fetchall()]
