"""The warehouse cache: rows kept for the TTL then refreshed, dropped by this process' warehouse events."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

from catalog_es.state import WarehouseRow
from catalog_es.store.eventstore import RecordedEvent
from projections.catalog.warehouse_cache import WarehouseCache

WAREHOUSE = uuid.UUID(int=5)


def _row(name: str) -> WarehouseRow:
    return WarehouseRow(id=WAREHOUSE, project_id=uuid.UUID(int=0), name=name, location="file:///w", storage_profile={})


def _event(stream_id: str) -> RecordedEvent:
    return RecordedEvent(
        position=1,
        id=uuid.uuid4(),
        source="/catalog-es",
        type="io.catalog-es.warehouse.renamed.v1",
        subject=stream_id,
        time=datetime(2026, 1, 1, tzinfo=UTC),
        datacontenttype="application/json",
        data={},
        extensions={},
        stream_id=stream_id,
        stream_version=2,
        commit_id=uuid.uuid4(),
    )


class _Database:
    """Stands in for the read model: counts lookups and answers the current row."""

    def __init__(self) -> None:
        self.row: WarehouseRow | None = _row("first")
        self.lookups = 0

    async def load(self) -> WarehouseRow | None:
        self.lookups += 1
        row = self.row  # read at once, answered a little later: like a query
        await asyncio.sleep(0.01)
        return row


def test_cached_row_is_served_until_the_ttl_passes_then_refreshed_in_the_background():
    now = [100.0]
    cache, db = WarehouseCache(ttl=2.0, clock=lambda: now[0]), _Database()

    async def scenario():
        first = await cache.get(WAREHOUSE, db.load)
        db.row = _row("renamed elsewhere")
        now[0] += 1.9
        within = await cache.get(WAREHOUSE, db.load)
        lookups_within = db.lookups
        now[0] += 0.2
        expired = await cache.get(WAREHOUSE, db.load)  # the old row, while one lookup refreshes it
        await asyncio.sleep(0.05)
        return first, within, lookups_within, expired, await cache.get(WAREHOUSE, db.load)

    first, within, lookups_within, expired, refreshed = asyncio.run(scenario())
    assert (first.name, within.name, expired.name, refreshed.name) == ("first", "first", "first", "renamed elsewhere")
    assert (lookups_within, db.lookups) == (1, 2)


def test_concurrent_first_requests_share_one_lookup():
    cache, db = WarehouseCache(), _Database()

    async def scenario():
        return await asyncio.gather(*(cache.get(WAREHOUSE, db.load) for _ in range(20)))

    rows = asyncio.run(scenario())
    assert {row.name for row in rows} == {"first"}
    assert db.lookups == 1


def test_warehouse_event_drops_the_entry_when_appended_by_this_process():
    cache, db = WarehouseCache(ttl=60.0), _Database()

    async def scenario():
        await cache.get(WAREHOUSE, db.load)
        db.row = _row("renamed here")
        await cache.forget(None, [_event(f"namespace-{uuid.uuid4()}")])  # type: ignore[arg-type]
        unchanged = await cache.get(WAREHOUSE, db.load)
        await cache.forget(None, [_event(f"warehouse-{WAREHOUSE}")])  # type: ignore[arg-type]
        return unchanged, await cache.get(WAREHOUSE, db.load)

    unchanged, renamed = asyncio.run(scenario())
    assert (unchanged.name, renamed.name) == ("first", "renamed here")


def test_lookup_started_before_a_warehouse_event_is_not_kept():
    cache, db = WarehouseCache(ttl=60.0), _Database()

    async def scenario():
        racing = asyncio.ensure_future(cache.get(WAREHOUSE, db.load))  # reads the row as it was
        await asyncio.sleep(0.003)
        db.row = _row("changed meanwhile")
        await cache.forget(None, [_event(f"warehouse-{WAREHOUSE}")])  # type: ignore[arg-type]
        await racing
        return await cache.get(WAREHOUSE, db.load)

    assert asyncio.run(scenario()).name == "changed meanwhile"


def test_missing_warehouse_is_looked_up_again_when_asked_again():
    cache, db = WarehouseCache(ttl=60.0), _Database()
    db.row = None

    async def scenario():
        missing = await cache.get(WAREHOUSE, db.load)
        db.row = _row("created")
        return missing, await cache.get(WAREHOUSE, db.load)

    missing, created = asyncio.run(scenario())
    assert missing is None
    assert created is not None
    assert created.name == "created"


class _Follower:
    """Stands in for the log follower: `seen` is the head through which it handed out what changed."""

    def __init__(self) -> None:
        self.seen: int | None = 7
        self.looks = 0

    async def sync(self) -> None:
        self.looks += 1


def _followed() -> tuple[WarehouseCache, _Follower, _Database]:
    cache, follower, db = WarehouseCache(ttl=None), _Follower(), _Database()
    cache.follow(follower.sync, lambda: follower.seen)
    return cache, follower, db


def test_an_unconfirmed_row_is_confirmed_by_a_head_the_follower_has_seen():
    cache, follower, db = _followed()

    async def scenario() -> tuple[WarehouseRow | None, WarehouseRow | None]:
        before = cache.unconfirmed(WAREHOUSE)  # nothing cached yet
        await cache.get(WAREHOUSE, db.load)
        return before, cache.unconfirmed(WAREHOUSE)

    before, row = asyncio.run(scenario())
    assert before is None
    assert row is not None
    assert row.name == "first"
    looks = follower.looks
    assert cache.confirmed(row, 7)
    assert cache.confirmed(row, 6)
    assert follower.looks == looks  # no look at the log for either


def test_a_head_past_the_followers_is_not_confirmed():
    cache, follower, db = _followed()
    row = asyncio.run(cache.get(WAREHOUSE, db.load))
    assert row is not None
    assert not cache.confirmed(row, 8)  # committed since the last look: it may have changed the warehouse
    follower.seen = 8
    assert cache.confirmed(row, 8)


def test_a_row_dropped_since_it_was_taken_is_not_confirmed():
    cache, _, db = _followed()
    row = asyncio.run(cache.get(WAREHOUSE, db.load))
    assert row is not None
    db.row = _row("renamed")
    cache.drop([WAREHOUSE])  # the follower saw the warehouse change
    assert not cache.confirmed(row, 7)
    fresh = asyncio.run(cache.get(WAREHOUSE, db.load))
    assert fresh is not None
    assert not cache.confirmed(row, 7)
    assert cache.confirmed(fresh, 7)


def test_nothing_is_unconfirmed_or_confirmed_while_the_log_is_not_followed():
    cache, follower, db = _followed()
    row = asyncio.run(cache.get(WAREHOUSE, db.load))
    assert row is not None
    follower.seen = None  # the follower's connection is gone
    assert not cache.confirmed(row, 0)
    cache.follow(None)
    assert cache.unconfirmed(WAREHOUSE) is None
    assert not cache.confirmed(row, 0)
    ttl = WarehouseCache(ttl=60.0)
    asyncio.run(ttl.get(WAREHOUSE, db.load))
    assert ttl.unconfirmed(WAREHOUSE) is None  # a TTL cache is confirmed by nothing but time
