"""A projector process: follows the log from its checkpoint, one transaction per batch (read model + checkpoint)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence

import psycopg
import structlog

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import NOTIFY_CHANNEL, check_contiguous, read_events
from projections.checkpoints import lock_checkpoint, move_checkpoint
from projections.registry import Projection

_log = structlog.get_logger("catalog_es.projector")


def _stop_if_cancelled() -> None:
    """psycopg can turn a cancellation inside a query into a connection error: keep the cancel request alive."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class ProjectorRunner:
    """Exactly-once effect: the checkpoint row is locked and moved in the transaction that writes the read model,
    so a crash mid-batch rolls both back. LISTEN wakes it at once; a poll every `poll_seconds` covers missed
    notifications and a dropped listening connection."""

    def __init__(self, dsn: str, projection: Projection, *, batch_size: int = 500, poll_seconds: float = 1.0) -> None:
        if projection.inline:
            raise ValueError(f"{projection.name} is projected inline, in the append transaction")
        self._dsn, self._projection = dsn, projection
        self._batch_size, self._poll_seconds = batch_size, poll_seconds
        self._wakeup = asyncio.Event()

    async def run(self) -> None:
        """Follow the log until cancelled; database failures are logged and retried."""
        listening = asyncio.create_task(self._listen())
        try:
            while True:
                try:
                    async with await self._connect("") as conn:
                        _log.info("projector.following", projector=self._projection.name)
                        await self._follow(conn)
                except psycopg.OperationalError as exc:
                    _stop_if_cancelled()
                    _log.warning("projector.database_unavailable", projector=self._projection.name, error=str(exc))
                    await asyncio.sleep(self._poll_seconds)
        finally:
            listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listening

    async def step(self, conn: Connection) -> int:
        """Apply one batch after the checkpoint; returns how many events it applied (0: caught up)."""
        name = self._projection.name
        async with conn.transaction():
            checkpoint = await lock_checkpoint(conn, name)
            events = await read_events(conn, after=checkpoint, limit=self._batch_size)
            check_contiguous(checkpoint, events)
            if events:
                await self._projection.apply(conn, events)
                await move_checkpoint(conn, name, events[-1].position)
        return len(events)

    async def _follow(self, conn: Connection) -> None:
        while True:
            self._wakeup.clear()
            while await self.step(conn):
                _stop_if_cancelled()
            _stop_if_cancelled()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._poll_seconds):
                    await self._wakeup.wait()

    async def _listen(self) -> None:
        """Set the wake-up flag on each commit notification; reconnect (polling meanwhile) when the link drops."""
        while True:
            try:
                async with await self._connect(" listen") as conn:
                    await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self._wakeup.set()  # anything committed while not listening
                    async for _ in conn.notifies():
                        self._wakeup.set()
            except psycopg.Error as exc:
                _stop_if_cancelled()
                _log.warning("projector.listen_lost", projector=self._projection.name, error=str(exc))
            await asyncio.sleep(self._poll_seconds)

    async def _connect(self, role: str) -> Connection:
        name = f"catalog-es projector {self._projection.name}{role} {os.getpid()}"
        return await psycopg.AsyncConnection.connect(self._dsn, autocommit=True, application_name=name)


async def run_projectors(
    dsn: str, projections: Sequence[Projection], *, batch_size: int = 500, poll_seconds: float = 1.0
) -> None:
    """Run several projectors concurrently until cancelled (or one fails)."""
    runners = [ProjectorRunner(dsn, p, batch_size=batch_size, poll_seconds=poll_seconds) for p in projections]
    await asyncio.gather(*(runner.run() for runner in runners))
