"""Plan-ids are self-describing and signed; the planning pool refuses new plans past its bound; spent ids stay spent."""

from __future__ import annotations

import asyncio
import threading
import uuid

import msgspec
import pytest

from catalog_es.planning.cache import PlanRegistry, PlanState
from catalog_es.planning.plan_ids import PlanClaim, PlanIds
from catalog_es.planning.planner import PlannedScan
from catalog_es.planning.service import PlanningBusyError, ScanPlanning

CLAIM = PlanClaim(uuid.UUID(int=1), uuid.UUID(int=2), '{"snapshot-id":7}', "", "alice", "n1")


def test_plan_id_reads_back_its_claim_when_signed_with_the_same_key() -> None:
    plan_id = PlanIds(b"k" * 32).issue(CLAIM)
    assert PlanIds(b"k" * 32).read(plan_id) == CLAIM  # another replica, same derived key
    assert PlanIds(b"x" * 32).read(plan_id) is None  # another catalog's key


def test_plan_id_is_refused_when_forged_or_malformed() -> None:
    ids = PlanIds(b"k" * 32)
    plan_id = ids.issue(CLAIM)
    prefix, body, digest = plan_id.split(".")
    other = msgspec.structs.replace(CLAIM, table_id=uuid.UUID(int=3))
    forged_body = ids.issue(other).split(".")[1]
    flipped = digest[:-1] + ("A" if digest[-1] != "A" else "B")
    for bad in (f"{prefix}.{forged_body}.{digest}", f"{prefix}.{body}.{flipped}", "nonsense", "pi1.!!.??", ""):
        assert ids.read(bad) is None, bad


def test_registry_spends_removed_ids_and_forgets_the_oldest_past_capacity() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        registry = PlanRegistry(2)
        key = (uuid.UUID(int=2), b"{}", "")
        for name in ("a", "b", "c"):
            registry.add(name, PlanState("alice", uuid.UUID(int=2), key, loop.create_future()))
        assert registry.find("a", "alice", uuid.UUID(int=2)) is None  # forgotten: the oldest
        assert registry.find("c", "bob", uuid.UUID(int=2)) is None  # another principal's
        registry.remove("c")
        assert registry.spent("c")
        assert registry.find("c", "alice", uuid.UUID(int=2)) is None

    asyncio.run(scenario())


def test_planning_refuses_a_new_plan_when_max_queued_are_in_flight() -> None:
    release = threading.Event()

    def slow() -> PlannedScan:
        release.wait(10)
        return PlannedScan(pages=(b"{}",), data_files=0, delete_files=0)

    async def scenario() -> None:
        planning = ScanPlanning(
            cache_bytes=1 << 20, max_plans=10, page_size=10, sync_seconds=0, ids=PlanIds(b"k" * 32), max_queued=1
        )
        first = planning.start((uuid.UUID(int=1), b"a", ""), slow)
        shared = planning.start((uuid.UUID(int=1), b"a", ""), slow)  # the same plan in flight: shared, not new
        with pytest.raises(PlanningBusyError):
            planning.start((uuid.UUID(int=1), b"b", ""), slow)
        release.set()
        assert (await first).data_files == (await shared).data_files == 0
        again = planning.start((uuid.UUID(int=1), b"b", ""), slow)  # room again once the first finished
        assert (await again).pages == (b"{}",)

    asyncio.run(scenario())
