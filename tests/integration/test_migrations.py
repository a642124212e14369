"""Schema migrations: applied once each, idempotent, and safe when run concurrently."""

from __future__ import annotations

import asyncio

import psycopg

from api.runtime.database import ALL_MIGRATIONS, migrate
from catalog_es.store.database import open_pool
from catalog_es.store.migrations import EVENT_STORE_MIGRATIONS, apply_migrations

ALL_NAMES = [migration.name for migration in ALL_MIGRATIONS]


def _recorded_names(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]


def _tables(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {row[0] for row in rows}


def test_migrate_applies_every_step_in_order_when_database_is_empty(pg_dsn):
    assert asyncio.run(migrate(pg_dsn)) == ALL_NAMES
    assert _recorded_names(pg_dsn) == sorted(ALL_NAMES)
    assert {"catalog_events", "catalog_event_counter", "projects", "warehouses", "namespaces", "tables"} <= _tables(
        pg_dsn
    )


def test_migrate_applies_nothing_when_run_a_second_time(pg_dsn):
    asyncio.run(migrate(pg_dsn))
    assert asyncio.run(migrate(pg_dsn)) == []
    assert _recorded_names(pg_dsn) == sorted(ALL_NAMES)


def test_migrate_keeps_counter_and_events_when_run_again(pg_dsn):
    asyncio.run(migrate(pg_dsn))
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("UPDATE catalog_event_counter SET position = 7")
    asyncio.run(migrate(pg_dsn))
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT position FROM catalog_event_counter").fetchall() == [(7,)]


def test_apply_migrations_applies_only_new_steps_when_some_are_done(pg_dsn):
    async def scenario() -> tuple[list[str], list[str]]:
        pool = await open_pool(pg_dsn, min_size=1, max_size=1)
        try:
            async with pool.connection() as conn:
                first = await apply_migrations(conn, EVENT_STORE_MIGRATIONS)
                second = await apply_migrations(conn, ALL_MIGRATIONS)
                return first, second
        finally:
            await pool.close()

    first, second = asyncio.run(scenario())
    assert first == [migration.name for migration in EVENT_STORE_MIGRATIONS]
    assert second == [name for name in ALL_NAMES if name not in first]


def test_migrate_applies_each_step_exactly_once_when_runs_are_concurrent(pg_dsn):
    async def scenario() -> list[list[str]]:
        return list(await asyncio.gather(*(migrate(pg_dsn) for _ in range(6))))

    results = asyncio.run(scenario())
    applied = [name for result in results for name in result]
    assert sorted(applied) == sorted(ALL_NAMES)
    assert ALL_NAMES in results  # one run did all the work, in order
    assert _recorded_names(pg_dsn) == sorted(ALL_NAMES)
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT position FROM catalog_event_counter").fetchall() == [(0,)]
