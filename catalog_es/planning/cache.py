"""Finished plans by what they depend on, and the plans in flight by id: both bounded, both per process."""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from dataclasses import dataclass

from catalog_es.planning.planner import PlannedScan

PlanKey = tuple[uuid.UUID, bytes, str]  # (table row id, canonical request with its snapshot pinned, policy fingerprint)


class PlanCache:
    """An LRU of finished plans bounded by their encoded size; a plan depends only on its key (a snapshot never
    changes, the request and the policy are in it), so an entry is never stale and never invalidated."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._plans: OrderedDict[PlanKey, PlannedScan] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: PlanKey) -> PlannedScan | None:
        plan = self._plans.get(key)
        if plan is None:
            self.misses += 1
            return None
        self._plans.move_to_end(key)
        self.hits += 1
        return plan

    def put(self, key: PlanKey, plan: PlannedScan) -> None:
        if plan.size > self._max_bytes:
            return  # larger than the whole cache: served once, not kept
        old = self._plans.pop(key, None)
        if old is not None:
            self._bytes -= old.size
        self._plans[key] = plan
        self._bytes += plan.size
        while self._bytes > self._max_bytes:
            _, evicted = self._plans.popitem(last=False)
            self._bytes -= evicted.size


@dataclass
class PlanState:
    """One plan-id: whose it is, for which table, and the planning it waits for."""

    principal: str
    table_id: uuid.UUID
    key: PlanKey
    job: asyncio.Future[PlannedScan]


class PlanRegistry:
    """Plans by id, so `GET/DELETE …/plan/{plan-id}` find them at once; at most `capacity`, the oldest forgotten
    first. A cache only: an id this process forgot, or never saw (another replica's), is signed and planned again
    from itself (`catalog_es.planning.plan_ids`). Ids cancelled or reported failed here are remembered as spent
    (as many), so they answer 404 on this process from then on."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._plans: OrderedDict[str, PlanState] = OrderedDict()
        self._spent: OrderedDict[str, None] = OrderedDict()

    def add(self, plan_id: str, state: PlanState) -> None:
        self._plans[plan_id] = state
        while len(self._plans) > self._capacity:
            _, old = self._plans.popitem(last=False)
            old.job.cancel()

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
        while len(self._spent) > self._capacity:
            self._spent.popitem(last=False)
