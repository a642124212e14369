"""The one loop that follows the event log: connect, LISTEN, read contiguous batches, wait (notify or poll), reconnect.

Its clients differ only in what a batch means: the projector runner applies it (the store selects only its
projection's event types) and moves its checkpoint in the same transaction; the relay publishes it and advances its
checkpoint after the acks; a serving process's `ChangedStreams` (projections/changed_streams.py) hands which
streams changed to its caches (the store selects the streams of their kinds).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Collection

import psycopg
import structlog

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import NOTIFY_CHANNEL, Batch, read_batch
from catalog_es.store.notices import Notice, parse_notice

_log = structlog.get_logger("catalog_es.follow")

Session = Callable[[Connection], Awaitable[None]]


def stop_if_cancelled() -> None:
    """psycopg can turn a cancellation inside a query into a connection error: keep the cancel request alive."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def next_batch(conn: Connection, after: int, limit: int, types: Collection[str] | None = None) -> Batch:
    """The next events after `after`, only of `types` (None: all of them, checked gap-free); the store filters, and
    the batch's `through` is where the follower's checkpoint goes, past the events of other types."""
    return await read_batch(conn, after=after, limit=limit, types=types)


class LogFollower:
    """One listening connection per follower, kept open across failures.

    `session` runs on a fresh autocommit connection that already LISTENs, so a commit made while the
    session works is not missed (psycopg queues notifications until `wait` reads them); a NOTIFY lost
    with a dropped connection is covered by the poll. Database errors of the `retry` kinds end the
    session, are logged, and a new connection is made after `delay()` seconds.
    """

    def __init__(
        self,
        dsn: str,
        application_name: str,
        *,
        poll_seconds: float,
        retry: tuple[type[Exception], ...] = (psycopg.OperationalError,),
    ) -> None:
        self._dsn, self._name = dsn, f"{application_name} {os.getpid()}"
        self._poll_seconds, self._retry = poll_seconds, retry

    async def run(
        self,
        session: Session,
        *,
        listen: bool = True,
        delay: Callable[[], float] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        """Run `session` until cancelled, reconnecting after each retried failure.

        `listen=False`: the session calls `listen` itself when it starts following (a standby relay
        must not queue every commit's notification while it waits for the leadership).
        """
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True, application_name=self._name)
                async with conn:
                    if listen:
                        await self.listen(conn)
                    await session(conn)
            except self._retry as exc:
                stop_if_cancelled()
                if on_error is not None:
                    on_error(exc)
                _log.warning("follow.database_unavailable", follower=self._name, error=str(exc))
                await asyncio.sleep(delay() if delay else self._poll_seconds)

    async def listen(self, conn: Connection) -> None:
        """Subscribe `conn` to commit notifications (psycopg queues them until `wait`)."""
        await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")

    async def wait(self, conn: Connection) -> int | None:
        """Until a commit is notified (returns the head it announced) or the poll interval passes (None)."""
        notice = await self.wait_notice(conn)
        return notice.head if notice is not None else None

    async def wait_notice(self, conn: Connection, *, wakeup: asyncio.Event | None = None) -> Notice | None:
        """Until a commit is notified (returns its notice: the head and the kinds of stream it changed), the poll
        interval passes or `wakeup` is set (None; `wakeup` is left set: the caller clears it when it takes what
        woke it)."""
        if wakeup is None:
            return await self._notified(conn)
        if wakeup.is_set():
            return None
        notified = asyncio.ensure_future(self._notified(conn))
        woken = asyncio.ensure_future(wakeup.wait())
        try:
            await asyncio.wait({notified, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            if not notified.done():
                notified.cancel()  # leaves `notifies` at its wait for the socket: the connection stays usable
            await asyncio.wait({notified, woken})  # the connection is free again before the caller queries it
        stop_if_cancelled()
        return None if notified.cancelled() else notified.result()

    async def _notified(self, conn: Connection) -> Notice | None:
        notice = None
        async for notify in conn.notifies(timeout=self._poll_seconds, stop_after=1):
            notice = parse_notice(notify.payload)
        stop_if_cancelled()
        return notice
