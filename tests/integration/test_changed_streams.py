"""One log follower per serving process: the warehouse cache and the revocation list share one listening connection,
and one commit's notification reaches both (issue 30)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence

import psycopg
import pytest

from api.app import create_app
from api.auth.local_tokens import RevocationList
from api.auth.revocations import RevocationFeed
from api.settings import load_settings
from catalog_es.errors import WarehouseInactiveError
from catalog_es.events.access import ServicePrincipalRevoked
from catalog_es.events.catalog import WarehouseDeactivated
from catalog_es.state import WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import log_head
from catalog_es.store.secrets import generate_secrets_key
from commands.service_principals import CreateServicePrincipal, handle_create_service_principal
from commands.warehouses import SetWarehouseActive, handle_set_warehouse_active
from projections.catalog.warehouse_cache import WarehouseCache
from projections.catalog.warehouse_invalidation import WarehouseInvalidation
from projections.changed_streams import APPLICATION_NAME, ChangedStreams
from tests.integration.conftest import META, OpenCatalog

ANSWER_SECONDS = 10.0  # well above a notification's round trip on a loaded machine


async def _followers(dsn: str) -> list[str]:
    """The catalog's own connections to this database (the pools' have no application name)."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT application_name FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND application_name LIKE 'catalog-es%' ORDER BY application_name"
        )
        return [str(name) for (name,) in await cursor.fetchall()]


async def _eventually(check: object, what: str) -> None:
    for _ in range(int(ANSWER_SECONDS / 0.02)):
        if callable(check) and check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(what)


def test_one_listening_connection_serves_the_warehouse_cache_and_the_revocation_list(
    migrated_dsn: str, open_catalog: OpenCatalog
) -> None:
    settings = load_settings(
        {
            "CATALOG_ES__PG_DSN": migrated_dsn,
            "CATALOG_ES__SERVICE_PRINCIPALS__ENABLED": "true",
            "CATALOG_ES__SECRETS_KEY": generate_secrets_key(),
        }
    )
    app = create_app(settings, migrated_dsn)

    async def scenario() -> None:
        async with open_catalog() as writer:  # another process's write side: its own pool and warehouse cache
            principal = await handle_create_service_principal(CreateServicePrincipal("etl", META), writer.ctx)
            async with app.lifespan():
                services = app.state.services
                revocations = services.local_tokens.revocations
                assert await _followers(migrated_dsn) == [f"{APPLICATION_NAME} {os.getpid()}"]
                assert app.state.changed_streams.subscribers == 2
                assert revocations.admits(principal.client_id, 1)  # loaded before serving
                loads = 0

                async def load() -> WarehouseRow | None:
                    nonlocal loads
                    loads += 1
                    async with services.store.connection() as conn:
                        return await services.read_model.warehouse_by_id(conn, writer.warehouse_id)

                assert await services.warehouses.get(writer.warehouse_id, load) is not None
                assert await services.warehouses.get(writer.warehouse_id, load) is not None
                assert loads == 1  # cached

                # One commit, so one notification, changes a warehouse and revokes the principal.
                async with writer.store.transaction(META) as tx:
                    row = await writer.ctx.state.warehouse_by_id(tx.conn, writer.warehouse_id)
                    assert row is not None
                    deactivated = WarehouseDeactivated(warehouse_id=row.id, project_id=row.project_id)
                    await tx.append(deactivated, expected_version=await tx.stream_version(deactivated.stream_id))
                    revoked = ServicePrincipalRevoked(client_id=principal.client_id)
                    await tx.append(revoked, expected_version=await tx.stream_version(revoked.stream_id))

                await _eventually(
                    lambda: not revocations.admits(principal.client_id, 1), "the revocation did not reach the list"
                )
                # The look that reloaded the list dropped the warehouse too: the next request reads it again.
                fresh = await services.warehouses.get(writer.warehouse_id, load)
                assert loads == 2
                assert fresh is not None
                assert fresh.status == "inactive"
                with pytest.raises(WarehouseInactiveError):
                    await services.ctx.warehouse(writer.warehouse_id)

    asyncio.run(scenario())


def test_losing_the_connection_stops_every_subscriber_trusting_what_it_holds(migrated_dsn: str) -> None:
    """Fail closed for both: the revocation list refuses local tokens and the cache holds nothing until the
    follower is back (here: never, its retry is past the test)."""

    async def scenario() -> None:
        changes = ChangedStreams(migrated_dsn, retry_seconds=60.0)
        cache, revocations = WarehouseCache(ttl=None), RevocationList()
        changes.subscribe(WarehouseInvalidation(changes, cache, wait_seconds=ANSWER_SECONDS))
        changes.subscribe(RevocationFeed(revocations))
        running = asyncio.create_task(changes.run())
        try:
            await asyncio.wait_for(changes.started.wait(), ANSWER_SECONDS)
            assert revocations.following
            assert cache._sync is not None
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as admin:
                await admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE %s",
                    (f"{APPLICATION_NAME} %",),
                )
            await _eventually(lambda: not revocations.following, "the list still trusts a lost log")
            assert cache._sync is None
            await asyncio.wait_for(changes.look(), ANSWER_SECONDS)  # nothing followed: returns at once
        finally:
            running.cancel()

    asyncio.run(scenario())


def test_a_look_on_demand_hands_each_subscriber_its_kind_only(migrated_dsn: str, open_catalog: OpenCatalog) -> None:
    """`look()` needs no notification (the poll is an hour here), and a subscriber gets only streams of its kinds."""
    seen: list[str] = []

    class Recorder:
        kinds = ("warehouse",)

        async def start(self, conn: Connection) -> None:
            del conn

        async def changed(self, conn: Connection, stream_ids: Sequence[str]) -> None:
            del conn
            seen.extend(stream_ids)

        def lost(self) -> None:
            pass

    async def scenario() -> None:
        async with open_catalog() as writer:
            changes = ChangedStreams(migrated_dsn, poll_seconds=3600.0)
            changes.subscribe(Recorder())
            running = asyncio.create_task(changes.run())
            try:
                await asyncio.wait_for(changes.started.wait(), ANSWER_SECONDS)
                await asyncio.wait_for(changes.look(), ANSWER_SECONDS)  # nothing notified: a look of its own
                assert seen == []
                await handle_create_service_principal(CreateServicePrincipal("etl", META), writer.ctx)
                await handle_set_warehouse_active(
                    SetWarehouseActive(warehouse_id=writer.warehouse_id, active=False, metadata=META), writer.ctx
                )
                await asyncio.wait_for(changes.look(), ANSWER_SECONDS)
                assert seen == [f"warehouse-{writer.warehouse_id}"]  # not the principal's or its user's streams
            finally:
                running.cancel()

    asyncio.run(scenario())


def test_the_head_seen_confirms_cached_warehouses_up_to_it_and_is_forgotten_once_lost(
    migrated_dsn: str, open_catalog: OpenCatalog
) -> None:
    """`seen` is the log head after each look: a cached row is confirmed for a statement that read a head up to it,
    never past it, never once its warehouse changed, and nothing is confirmed once the follower stopped."""

    async def scenario() -> tuple[list[bool], int | None]:
        async with open_catalog() as writer:
            changes = ChangedStreams(migrated_dsn, poll_seconds=3600.0)
            cache = WarehouseCache(ttl=None)
            changes.subscribe(WarehouseInvalidation(changes, cache, wait_seconds=ANSWER_SECONDS))

            async def head() -> int:
                async with writer.ctx.store.connection() as conn:
                    return await log_head(conn)

            async def load() -> WarehouseRow | None:
                async with writer.ctx.store.connection() as conn:
                    return await writer.ctx.state.warehouse_by_id(conn, writer.warehouse_id)

            running = asyncio.create_task(changes.run())
            try:
                await asyncio.wait_for(changes.started.wait(), ANSWER_SECONDS)
                row = await cache.get(writer.warehouse_id, load)
                assert row is not None
                first = await head()
                await handle_create_service_principal(CreateServicePrincipal("etl", META), writer.ctx)
                second = await head()
                await asyncio.wait_for(changes.look(), ANSWER_SECONDS)
                confirmed = [changes.seen == second, cache.confirmed(row, first), cache.confirmed(row, second)]
                confirmed.append(cache.confirmed(row, second + 1))  # committed since the last look: unknown
                await handle_set_warehouse_active(
                    SetWarehouseActive(warehouse_id=writer.warehouse_id, active=False, metadata=META), writer.ctx
                )
                third = await head()
                await asyncio.wait_for(changes.look(), ANSWER_SECONDS)
                confirmed += [changes.seen == third, cache.confirmed(row, third)]  # dropped: its warehouse changed
            finally:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
            return confirmed, changes.seen

    confirmed, seen_after = asyncio.run(scenario())
    assert confirmed == [True, True, True, False, True, False]
    assert seen_after is None
