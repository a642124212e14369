"""Finished plans by what they depend on, and the plans in flight by id: both bounded, both per process."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from cachetools import FIFOCache, LRUCache

from catalog_es.planning.planner import PlannedScan

PlanKey = tuple[uuid.UUID, bytes, str]  # (table row id, canonical request with its snapshot pinned, policy fingerprint)


class PlanCache:
    """An LRU of finished plans bounded by their encoded size; a plan depends only on its key (a snapshot never
    changes, the request and the policy are in it), so an entry is never stale and never invalidated."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._plans: LRUCache[PlanKey, PlannedScan] = LRUCache(max(max_bytes, 1), getsizeof=_size)
        self.hits = 0
        self.misses = 0

    def get(self, key: PlanKey) -> PlannedScan | None:
        plan = self._plans.get(key)
        if plan is None:
            self.misses += 1
            return None
        self.hits += 1
        return plan

    def put(self, key: PlanKey, plan: PlannedScan) -> None:
        if plan.size > self._max_bytes:
            return  # larger than the whole cache: served once, not kept
        self._plans[key] = plan


def _size(plan: PlannedScan) -> int:
    return plan.size


@dataclass
class PlanState:
    """One plan-id: whose it is, for which table, and the planning it waits for."""

    principal: str
    table_id: uuid.UUID
    key: PlanKey
    job: asyncio.Future[PlannedScan]


class _PlansInFlight(FIFOCache[str, PlanState]):
    """The oldest plan is forgotten first, and its planning cancelled."""

    def popitem(self) -> tuple[str, PlanState]:
        plan_id, state = super().popitem()
        state.job.cancel()
        return plan_id, state


class PlanRegistry:
    """Plans by id, so `GET/DELETE …/plan/{plan-id}` find them at once; at most `capacity`, the oldest forgotten
    first. A cache only: an id this process forgot, or never saw (another replica's), is signed and planned again
    from itself (`catalog_es.planning.plan_ids`). Ids cancelled or reported failed here are remembered as spent
    (as many), so they answer 404 on this process from then on."""

    def __init__(self, capacity: int) -> None:
        self._plans = _PlansInFlight(capacity)
        self._spent: FIFOCache[str, None] = FIFOCache(capacity)

    def add(self, plan_id: str, state: PlanState) -> None:
        self._plans[plan_id] = state

    def find(self, plan_id: str, principal: str, table_id: uuid.UUID) -> PlanState | None:
        """The plan, only for the caller who made it and on its table: anything else is no plan at all."""
        state = self._plans.get(plan_id)
        if state is None or state.principal != principal or state.table_id != table_id:
            return None
        return state

    def spent(self, plan_id: str) -> bool:
        return plan_id in self._spent

    def remove(self, plan_id: str) -> None:
        state = self._plans.pop(plan_id, None)
        if state is not None:
            state.job.cancel()
        self._spent[plan_id] = None
