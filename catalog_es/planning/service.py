"""Planning as a process-wide service: finished plans cached, identical plans in flight shared, work off the loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from catalog_es.planning.cache import PlanCache, PlanKey, PlanRegistry
from catalog_es.planning.plan_ids import PlanIds
from catalog_es.planning.planner import PlannedScan


class PlanningBusyError(Exception):
    """As many plans as `max_queued` are already being planned here: the caller should retry later."""


class ScanPlanning:
    """Owned by the composition root: one per process, so every request shares its cache and plan ids."""

    def __init__(
        self,
        *,
        cache_bytes: int,
        max_plans: int,
        page_size: int,
        sync_seconds: float,
        ids: PlanIds,
        max_queued: int = 64,
    ) -> None:
        self.cache = PlanCache(cache_bytes)
        self.registry = PlanRegistry(max_plans)
        self.ids = ids
        self.page_size = page_size
        self.sync_seconds = sync_seconds
        self.max_queued = max_queued
        self._in_flight: dict[PlanKey, asyncio.Future[PlannedScan]] = {}

    def start(self, key: PlanKey, work: Callable[[], PlannedScan]) -> asyncio.Future[PlannedScan]:
        """The plan for `key`: cached, already being planned, or `work` started now in a worker thread.

        The future is shared: cancelling one waiter's view (a cancelled plan-id) never stops another's.

        Raises: PlanningBusyError when `work` would start while `max_queued` distinct plans are in flight (the
        default executor's queue is unbounded: without this a burst of large scans queues for minutes).
        """
        loop = asyncio.get_running_loop()
        cached = self.cache.get(key)
        if cached is not None:
            done: asyncio.Future[PlannedScan] = loop.create_future()
            done.set_result(cached)
            return done
        running = self._in_flight.get(key)
        if running is None:
            if len(self._in_flight) >= self.max_queued:
                raise PlanningBusyError(f"{len(self._in_flight)} scan plans are in progress; retry later")
            running = asyncio.ensure_future(asyncio.to_thread(work))
            self._in_flight[key] = running
            running.add_done_callback(lambda job: self._finished(key, job))
        return asyncio.shield(running)

    def _finished(self, key: PlanKey, job: asyncio.Future[PlannedScan]) -> None:
        self._in_flight.pop(key, None)
        if not job.cancelled() and job.exception() is None:
            self.cache.put(key, job.result())
