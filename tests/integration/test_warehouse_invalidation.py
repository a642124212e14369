"""The warehouse cache's log follower: a change made elsewhere is dropped on its notification; when its connection is
lost a waiting request goes on (issue 29)."""

from __future__ import annotations

import asyncio

import psycopg

from catalog_es.state import WarehouseRow
from catalog_es.store.eventstore import EventMetadata
from commands.warehouses import RenameWarehouse, handle_rename_warehouse
from projections.catalog.warehouse_cache import WarehouseCache
from projections.catalog.warehouse_invalidation import WarehouseInvalidation
from projections.changed_streams import APPLICATION_NAME, ChangedStreams

# Well above one look at the log on a loaded machine; a request left behind waits forever.
ANSWER_SECONDS = 10.0


async def _following(cache: WarehouseCache) -> None:
    """Once the follower has its connection (the cache then waits for its looks)."""
    for _ in range(int(ANSWER_SECONDS / 0.05)):
        if cache._sync is not None:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the follower did not start following")


def test_a_request_waiting_for_a_look_that_loses_the_connection_goes_on(migrated_dsn: str) -> None:
    """A request in flight when PostgreSQL went down never answered: the follower took its waiter for a look, the
    look failed with the connection, and the waiter was dropped. It is released once the cache stops following."""

    async def scenario() -> None:
        cache = WarehouseCache(ttl=None)
        changes = ChangedStreams(migrated_dsn, retry_seconds=60.0)
        follower = WarehouseInvalidation(changes, cache, wait_seconds=60.0)
        changes.subscribe(follower)
        running = asyncio.create_task(changes.run())
        try:
            await _following(cache)
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as admin:
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE %s",
                    (f"{APPLICATION_NAME} %",),
                )
            await asyncio.wait_for(follower.sync(), ANSWER_SECONDS)
            assert cache._sync is None  # no longer trusted: the released request reads the database
        finally:
            running.cancel()

    asyncio.run(scenario())


def test_a_request_waits_for_a_hanging_look_no_longer_than_its_bound(migrated_dsn: str) -> None:
    """While the follower's look hangs (its connection waits on a lock here; a frozen server in an outage) a request
    gives up after `wait_seconds` with the error the API answers 503 for, instead of hanging with it."""

    async def scenario() -> None:
        cache = WarehouseCache(ttl=None)
        changes = ChangedStreams(migrated_dsn, retry_seconds=60.0)
        follower = WarehouseInvalidation(changes, cache, wait_seconds=1.0)
        changes.subscribe(follower)
        running = asyncio.create_task(changes.run())
        try:
            await _following(cache)
            async with await psycopg.AsyncConnection.connect(migrated_dsn) as holder:
                await holder.execute("LOCK TABLE catalog_event_counter IN ACCESS EXCLUSIVE MODE")
                started = asyncio.get_running_loop().time()
                try:
                    await asyncio.wait_for(follower.sync(), ANSWER_SECONDS)
                except psycopg.OperationalError:
                    pass
                else:
                    raise AssertionError("the look could not have finished while the counter was locked")
                assert asyncio.get_running_loop().time() - started < ANSWER_SECONDS
        finally:
            running.cancel()

    asyncio.run(scenario())


def test_a_warehouse_changed_by_another_process_is_dropped_on_its_notification_before_any_request(
    open_catalog, migrated_dsn: str
) -> None:
    """The follower looks at the log when a notification names a warehouse stream, not only when a request waits."""

    async def scenario() -> None:
        async with open_catalog() as catalog:  # the other process: its own store and cache
            cache = WarehouseCache(ttl=None)
            changes = ChangedStreams(migrated_dsn, poll_seconds=3600.0)  # no poll: only the notification wakes it
            changes.subscribe(WarehouseInvalidation(changes, cache, wait_seconds=60.0))
            running = asyncio.create_task(changes.run())
            try:
                await _following(cache)

                async def load() -> WarehouseRow | None:
                    async with catalog.store.connection() as conn:
                        return await catalog.ctx.state.warehouse_by_id(conn, catalog.warehouse_id)

                assert await cache.get(catalog.warehouse_id, load) is not None
                assert catalog.warehouse_id in cache._rows  # cached, and no request comes from now on
                rename = RenameWarehouse(catalog.warehouse_id, "renamed", EventMetadata(actor="tester"))
                await handle_rename_warehouse(rename, catalog.ctx)
                for _ in range(int(ANSWER_SECONDS / 0.05)):
                    if catalog.warehouse_id not in cache._rows:
                        return
                    await asyncio.sleep(0.05)
                raise AssertionError("the renamed warehouse stayed cached")
            finally:
                running.cancel()

    asyncio.run(scenario())
