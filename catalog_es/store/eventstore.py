"""The event store: append CloudEvents atomically, per-stream optimistic concurrency, inline projections."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from datetime import datetime
from functools import lru_cache
from typing import Any

import msgspec
from psycopg import AsyncCursor, OperationalError, errors
from psycopg.types.json import Jsonb

from catalog_es.clock import Clock, IdSource
from catalog_es.events import Event, Json, decode_event, event_data
from catalog_es.store.database import Connection, Pool
from catalog_es.store.notices import kinds_suffix

NOTIFY_CHANNEL = "catalog_events"
_LOCK_COUNTER = b"SELECT position FROM catalog_event_counter FOR UPDATE"
_BEGIN, _COMMIT = b"BEGIN", b"COMMIT"

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
    # A table's metadata document after this event when its writer had it, never stored: the inline
    # projection uses it instead of rebuilding the document from the change the event records.
    document: Json | None = None
    encoded_document: bytes | None = None  # `document` as its writer encoded it (JSON), when it did

    def decode(self) -> Event:
        return decode_event(self.type, self.data)


class EventMetadata(msgspec.Struct, frozen=True):
    """Who caused the events and in which request; recorded as CloudEvents extension attributes."""

    actor: str = "anonymous"
    request_id: str | None = None
    imported_from: str | None = None  # `catalog-es import`: the source catalog and object the event adopted
    released_to: str | None = None  # a hand-off: the catalog a released table or view went to

    def extensions(self) -> Json:
        extensions: Json = {"actor": self.actor}
        if self.request_id:
            extensions["requestid"] = self.request_id
        if self.imported_from:
            extensions["importedfrom"] = self.imported_from
        if self.released_to:
            extensions["releasedto"] = self.released_to
        return extensions


class StreamVersionConflictError(Exception):
    """Someone appended to the stream since its state was read (`actual` None: known only to be newer)."""

    def __init__(self, stream_id: str, expected: int, actual: int | None) -> None:
        super().__init__(f"Stream {stream_id} is at version {actual or 'newer'}, expected {expected}")
        self.stream_id, self.expected, self.actual = stream_id, expected, actual


_STREAM_VERSION_KEY = "catalog_events_stream_id_stream_version_key"
_DUPLICATE_KEY = re.compile(r"\(stream_id, stream_version\)=\((?P<stream>.*), (?P<version>\d+)\)")


def _stream_conflict(violation: errors.UniqueViolation) -> StreamVersionConflictError | None:
    """The conflict a duplicate (stream, version) stands for; None for any other unique violation."""
    if violation.diag.constraint_name != _STREAM_VERSION_KEY:
        return None
    found = _DUPLICATE_KEY.search(violation.diag.message_detail or "")
    if found is None:
        return StreamVersionConflictError("unknown", 0, None)
    return StreamVersionConflictError(found["stream"], int(found["version"]) - 1, None)


InlineProjector = Callable[[Connection, Sequence[RecordedEvent]], Awaitable[None]]


class Transaction:
    """One write transaction: events appended here commit together with the inline projections."""

    def __init__(self, conn: Connection, head: AsyncCursor[Any] | None, commit_id: uuid.UUID, time: datetime) -> None:
        self.conn = conn
        self._head = head  # the locked counter row (serialised transactions), read when events are recorded
        self._commit_id = commit_id
        self._time = time
        self._stream_versions: dict[str, int] = {}
        self.pending: list[tuple[Event, int]] = []
        # index in `pending` -> the document its writer computed, and its JSON when the writer encoded it
        self._documents: dict[int, tuple[Json, bytes | None]] = {}
        self.committing = False  # the writer's part is done: appends, projections and COMMIT are on their way

    def may_have_committed(self, failure: BaseException) -> bool:
        """Whether this transaction's events may be in the log although `failure` ended it.

        So when the connection was lost, or the request cancelled, while the appends and the COMMIT were under
        way: the server may have committed before the answer got back (a crash right after the commit record is
        durable). Whatever the events name, such as a metadata file, must then stay. An error the server reported
        for a statement (a conflict, a serialization failure) rolled the transaction back.
        """
        if not self.committing:
            return False
        if isinstance(failure, asyncio.CancelledError):
            return True
        return isinstance(failure, OperationalError) and _connection_lost(failure.sqlstate)

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

    async def append(
        self, event: Event, *, expected_version: int, document: Json | None = None, encoded: bytes | None = None
    ) -> None:
        """Append one event to its stream, which must still be at `expected_version`.

        `document` is the metadata the event results in, when the writer computed it: the inline projections get it
        along (it is not stored) and need not replay the event's change; `encoded`, its JSON if the writer has it,
        spares them encoding it again.

        In an unserialised transaction a stream's first expected version is not read back: it must come
        from committed state (streams only grow), and the unique (stream, version) key refuses it at
        commit if another writer got there first.

        Raises:
            StreamVersionConflictError: the stream moved on since it was read (here, or when committing).
        """
        if self._head is None:
            self._stream_versions.setdefault(event.stream_id, expected_version)
        actual = await self.stream_version(event.stream_id)
        if actual != expected_version:
            raise StreamVersionConflictError(event.stream_id, expected_version, actual)
        self._stream_versions[event.stream_id] = actual + 1
        if document is not None:
            self._documents[len(self.pending)] = (document, encoded)
        self.pending.append((event, actual + 1))

    async def flush(self, source: str, metadata: EventMetadata, ids: IdSource) -> list[RecordedEvent]:
        """Send the pending events; in an unserialised transaction they get their positions from the database.

        Their `position` is then 0 for the inline projectors, which do not use it.
        """
        position = 0
        if self._head is not None:
            row = await self._head.fetchone()
            if row is None:
                raise RuntimeError("The event store is not migrated: run `catalog-es migrate`")
            position = int(row[0])
        recorded = [
            RecordedEvent(
                position=position + offset if self._head is not None else 0,
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
                document=self._documents.get(offset - 1, (None, None))[0],
                encoded_document=self._documents.get(offset - 1, (None, None))[1],
            )
            for offset, (event, version) in enumerate(self.pending, start=1)
        ]
        kinds = kinds_suffix(event.stream_kind for event, _ in self.pending)  # every notification: all of them
        for start in range(0, len(recorded), _EVENTS_PER_STATEMENT):  # PostgreSQL takes 65,535 parameters
            chunk = recorded[start : start + _EVENTS_PER_STATEMENT]
            params: list[Any] = []
            for e in chunk:
                params += (e.id, e.source, e.type, e.subject, e.time, e.datacontenttype)
                params += (Jsonb(e.data), Jsonb(e.extensions), e.stream_id, e.stream_version, e.commit_id)
            await self.conn.execute(_append_statement(len(chunk)), (*params, NOTIFY_CHANNEL, kinds))
        return recorded


_EVENTS_PER_STATEMENT = 1000


@lru_cache(maxsize=64)
def _append_statement(count: int) -> bytes:
    """Advance the counter, insert `count` events at the positions it gives, notify: one statement.

    The counter row stays locked until COMMIT, so positions are gap-free and in commit order. The notification
    names the new head and the kinds of stream appended to (catalog_es/store/notices.py).
    """
    row = "((SELECT last FROM head) - {back}, " + ", ".join(["%s"] * (len(_COLUMNS.split(",")) - 1)) + ")"
    values = ", ".join(row.format(back=count - offset) for offset in range(1, count + 1))
    return (
        f"WITH head AS (UPDATE catalog_event_counter SET position = position + {count} RETURNING position AS last),"
        f" appended AS (INSERT INTO catalog_events ({_COLUMNS}) VALUES {values})"
        " SELECT pg_notify(%s, last::text || %s) FROM head"
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

    def connection(self) -> AbstractAsyncContextManager[Connection]:
        """A connection for reads outside any write transaction (the pool's own context: no second wrapper)."""
        return self.pool.connection()

    @asynccontextmanager
    async def transaction(self, metadata: EventMetadata, *, serialised: bool = True) -> AsyncIterator[Transaction]:
        """Open a write transaction; on a clean exit its events are appended and projected inline.

        Serialised (the default): the counter row is locked first, so write transactions run one at a
        time and checks made inside see every earlier commit. Unserialised: nothing is locked before the
        append statement, which locks the counter row only until COMMIT; use it for pure compare-and-swap
        appends whose expected versions were read from committed state (a table commit), whose only
        check is the unique (stream, version) key.

        Raises:
            StreamVersionConflictError: an expected version was stale.
        """
        # Pipeline mode: statements whose results nobody reads (BEGIN, the append, the projections, COMMIT) travel
        # together; a serialised transaction's lock answer is read only at flush, with the handler's first read. BEGIN
        # and COMMIT are sent as statements: psycopg's `transaction()` in a pipeline syncs on entering and twice on
        # leaving it (nested pipelines), five round trips for a table commit where these take two.
        try:
            async with self.pool.connection() as conn:
                try:
                    async with conn.pipeline():
                        await conn.execute(_BEGIN)
                        head = await conn.execute(_LOCK_COUNTER) if serialised else None
                        tx = Transaction(conn, head, self._ids.new_id(), self._clock.now())
                        yield tx
                        tx.committing = True
                        if tx.pending:
                            recorded = await tx.flush(self._source, metadata, self._ids)
                            for project in self._inline_projectors:
                                await project(conn, recorded)
                        await conn.execute(_COMMIT)
                    # leaving the pipeline syncs: every answer, the COMMIT's too, is read (an error raised) by now
                except BaseException:
                    with suppress(Exception):  # a lost connection has nothing to roll back (the pool drops it)
                        await conn.rollback()
                    raise
        except errors.UniqueViolation as violation:
            conflict = _stream_conflict(violation)
            if conflict is None:
                raise
            raise conflict from None

    async def read(self, *, after: int = 0, limit: int | None = None, last: int | None = None) -> list[RecordedEvent]:
        """Events after a position in log order; with `last`, only the newest that many."""
        async with self.pool.connection() as conn:
            return await read_events(conn, after=after, limit=limit, last=last)

    async def head(self) -> int:
        async with self.pool.connection() as conn:
            return await log_head(conn)


def _connection_lost(sqlstate: str | None) -> bool:
    """No answer (the socket closed), a connection exception (08) or the server shutting down (57)."""
    return sqlstate is None or sqlstate.startswith(("08", "57"))


async def log_head(conn: Connection) -> int:
    """The last position handed out (committed or being committed under the writers' lock)."""
    cursor = await conn.execute("SELECT position FROM catalog_event_counter")
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def event_time(conn: Connection, position: int) -> datetime | None:
    """When the event at `position` was recorded (None: no such event); lag is measured from it."""
    cursor = await conn.execute("SELECT time FROM catalog_events WHERE global_position = %s", (position,))
    row = await cursor.fetchone()
    return row[0] if row else None


async def lock_writers(conn: Connection) -> None:
    """Inside a transaction: take the writers' lock (the counter row) until commit, so no append slips in."""
    await conn.execute(_LOCK_COUNTER)


def check_contiguous(after: int, events: Sequence[RecordedEvent]) -> None:
    """Positions are gap-free: a batch read after `after` must be `after + 1, after + 2, ...`.

    Raises:
        RuntimeError: the log has a hole, which is a bug, never something to skip.
    """
    if events and (events[0].position != after + 1 or events[-1].position != after + len(events)):
        raise RuntimeError(f"The log has a hole after position {after}: a bug, not something to skip")


async def read_events(
    conn: Connection,
    *,
    after: int = 0,
    limit: int | None = None,
    last: int | None = None,
    until: int | None = None,
    types: Collection[str] | None = None,
) -> list[RecordedEvent]:
    """Read events in log order from any connection (also a rebuild's): after `after`, through `until`, only of
    `types` (stored type names; None: every type); with `last`, only the newest that many."""
    where = "global_position > %s"
    params: list[Any] = [after]
    if until is not None:
        where += " AND global_position <= %s"
        params.append(until)
    if types is not None:  # the store filters: other events are neither sent nor decoded
        where += " AND type = ANY(%s)"
        params.append(list(types))
    if last is not None:
        query = (
            f"SELECT * FROM (SELECT {_COLUMNS} FROM catalog_events WHERE {where}"
            " ORDER BY global_position DESC LIMIT %s) newest ORDER BY global_position"
        )
        params.append(last)
    else:
        query = f"SELECT {_COLUMNS} FROM catalog_events WHERE {where} ORDER BY global_position"
        if limit is not None:
            query += " LIMIT %s"
            params.append(limit)
    cursor = await conn.execute(query.encode(), params)
    return [RecordedEvent(*row) for row in await cursor.fetchall()]


class Batch(msgspec.Struct, frozen=True):
    """A follower's next events, and how far they take it: every event in (after, `through`] is in `events` or
    not of the types asked for, so a checkpoint moves to `through` even when nothing was taken."""

    events: list[RecordedEvent]
    through: int


async def read_batch(
    conn: Connection, *, after: int, limit: int, until: int | None = None, types: Collection[str] | None = None
) -> Batch:
    """The next at most `limit` events after `after` (through `until`) of `types` (None: every type), in log order:
    eventsourcing's `select_notifications(start, limit, stop, topics)` over our log.

    Every type: the events are checked gap-free (a hole is a bug, never skipped) and the batch goes through the last
    one. Some types: the store selects only those (the other rows are neither sent nor decoded), so no hole can be
    seen; the range is bounded by `until` (a position the log had reached), else by the head read first. The counter
    commits with the events it numbers, so every position up to a head read earlier is visible: the batch goes
    through its last event when it is full, else through the bound, past every event of other types.
    """
    if types is None:
        events = await read_events(conn, after=after, limit=limit, until=until)
        check_contiguous(after, events)
        return Batch(events, events[-1].position if events else after)
    bound = until if until is not None else await log_head(conn)
    if bound <= after:
        return Batch([], after)
    events = await read_events(conn, after=after, limit=limit, until=bound, types=types)
    return Batch(events, events[-1].position if len(events) == limit else bound)
