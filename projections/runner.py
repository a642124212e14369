"""A projector process: follows the log from its checkpoint, one transaction per batch (read model + checkpoint)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog
from eventsourcing.persistence import Tracking

from catalog_es.store.database import Connection
from projections.checkpoints import insert_tracking, lock_checkpoint
from projections.follow import LogFollower, next_batch, stop_if_cancelled
from projections.registry import Projection

_log = structlog.get_logger("catalog_es.projector")


class ProjectorRunner:
    """Exactly-once effect: the checkpoint row is locked and moved in the transaction that writes the read model,
    so a crash mid-batch rolls both back. The follower wakes it on each commit, polls every `poll_seconds`
    for a missed notification, and reconnects after a database failure."""

    def __init__(self, dsn: str, projection: Projection, *, batch_size: int = 500, poll_seconds: float = 1.0) -> None:
        if projection.inline:
            raise ValueError(f"{projection.name} is projected inline, in the append transaction")
        self._projection, self._batch_size = projection, batch_size
        self._follower = LogFollower(dsn, f"catalog-es projector {projection.name}", poll_seconds=poll_seconds)

    async def run(self) -> None:
        """Follow the log until cancelled; database failures are logged and retried."""
        await self._follower.run(self._follow)

    async def step(self, conn: Connection) -> int:
        """Apply one batch after the checkpoint; returns how many positions the checkpoint moved (0: caught up).

        The store selects only the projection's event types; the checkpoint still moves past the others (to the head
        read for the batch), so lag and "caught up" are measured against the whole log.
        """
        name = self._projection.name
        async with conn.transaction():
            checkpoint = await lock_checkpoint(conn, name)
            batch = await next_batch(conn, checkpoint, self._batch_size, self._projection.types)
            if batch.events:
                await self._projection.project(conn, batch.events)
            if batch.through > checkpoint:
                await insert_tracking(conn, Tracking(name, batch.through))
        return batch.through - checkpoint

    async def _follow(self, conn: Connection) -> None:
        _log.info("projector.following", projector=self._projection.name)
        while True:
            while await self.step(conn):
                stop_if_cancelled()
            await self._follower.wait(conn)


async def run_projectors(
    dsn: str, projections: Sequence[Projection], *, batch_size: int = 500, poll_seconds: float = 1.0
) -> None:
    """Run several projectors concurrently until cancelled (or one fails)."""
    runners = [ProjectorRunner(dsn, p, batch_size=batch_size, poll_seconds=poll_seconds) for p in projections]
    await asyncio.gather(*(runner.run() for runner in runners))
