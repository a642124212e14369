"""The store filters by topic: projectors and rebuilds fetch only their projection's event types from PostgreSQL,
and their checkpoints still reach the log head past every event of other types."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, Self

import psycopg

from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import log_head, read_batch
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.checkpoints import load_checkpoint, projector_status
from projections.maintenance.health import catch_up_health
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG, MAINTENANCE_HEALTH, SEARCH, Projection
from projections.runner import ProjectorRunner
from projections.verify import verify_projection
from tests.integration.test_rebuild import META, _build_catalog

_EVENT_READ = "FROM catalog_events WHERE global_position >"


def _spying(fetched: list[str]) -> type[psycopg.AsyncCursor[Any]]:
    """A cursor class noting the type of every event row PostgreSQL sent back for an event read (a spy, no fake)."""

    class Spy(psycopg.AsyncCursor[Any]):
        _reads_events = False

        async def execute(self, query: Any, *args: Any, **kwargs: Any) -> Self:
            text = query.decode() if isinstance(query, bytes) else str(query)
            self._reads_events = _EVENT_READ in text and text.startswith("SELECT global_position, id, source, type")
            return await super().execute(query, *args, **kwargs)

        async def fetchall(self) -> list[Any]:
            rows = await super().fetchall()
            if self._reads_events:
                fetched.extend(str(row[3]) for row in rows)
            return rows

    return Spy


async def _spied(dsn: str, fetched: list[str]) -> psycopg.AsyncConnection[Any]:
    return await psycopg.AsyncConnection.connect(dsn, autocommit=True, cursor_factory=_spying(fetched))


async def _count_of(conn: psycopg.AsyncConnection[Any], projection: Projection) -> int:
    assert projection.types is not None
    cursor = await conn.execute("SELECT count(*) FROM catalog_events WHERE type = ANY(%s)", (list(projection.types),))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


def test_a_projector_fetches_only_its_types_and_its_checkpoint_reaches_the_head_past_the_others(
    open_catalog, migrated_dsn
):
    async def scenario() -> None:
        async with open_catalog() as catalog:
            await _build_catalog(catalog)
            fetched: list[str] = []
            async with await _spied(migrated_dsn, fetched) as conn:
                head = await log_head(conn)
                for projection in (SEARCH, MAINTENANCE_HEALTH):
                    assert projection.types is not None
                    fetched.clear()
                    runner = ProjectorRunner(migrated_dsn, projection, batch_size=3)
                    moved = [await runner.step(conn)]
                    while moved[-1]:
                        moved.append(await runner.step(conn))
                    taken = await _count_of(conn, projection)
                    assert 0 < taken < head, "the log should hold events of its types and of others"
                    assert set(fetched) <= projection.types
                    assert len(fetched) == taken  # each of its events fetched once, no other row sent
                    assert sum(moved) == head
                    assert await load_checkpoint(conn, projection.name) == head
                    status = await projector_status(conn, projection.name, inline=False, now=datetime.now(UTC))
                    assert (status.checkpoint, status.lag_positions) == (head, 0)

                # A tail of events the health model does not take: nothing fetched, the checkpoint moves to the head.
                for name in ("later_a", "later_b"):
                    await handle_create_namespace(
                        CreateNamespace(catalog.warehouse_id, Namespace((name,)), {}, META), catalog.ctx
                    )
                fetched.clear()
                runner = ProjectorRunner(migrated_dsn, MAINTENANCE_HEALTH)
                assert await runner.step(conn) == 2
                assert await runner.step(conn) == 0
                assert fetched == []
                assert await load_checkpoint(conn, MAINTENANCE_HEALTH.name) == await log_head(conn)

                # Verify reads every event (holes checked, the live model filtered by SQL against a replay filtered
                # by `project`) and finds the models built from filtered reads equal to it.
                fetched.clear()
                results = [await verify_projection(conn, p) for p in (SEARCH, MAINTENANCE_HEALTH)]
                assert all(r.identical for r in results), results
                assert len(fetched) == head + (
                    head + 2
                )  # through the checkpoints: search at head, health past the tail

    asyncio.run(scenario())


def test_a_rebuild_fetches_only_its_types_and_ends_at_the_head(open_catalog, migrated_dsn):
    async def scenario() -> None:
        async with open_catalog() as catalog:
            await _build_catalog(catalog)
            for name in ("tail_a", "tail_b", "tail_c"):  # the log ends with events the health model does not take
                await handle_create_namespace(
                    CreateNamespace(catalog.warehouse_id, Namespace((name,)), {}, META), catalog.ctx
                )
            fetched: list[str] = []
            async with await _spied(migrated_dsn, fetched) as conn:
                head = await log_head(conn)
                for projection in (CATALOG, SEARCH, MAINTENANCE_HEALTH):
                    assert projection.types is not None
                    fetched.clear()
                    assert await rebuild_projection(conn, projection, batch=2) == head
                    assert set(fetched) <= projection.types
                    assert len(fetched) == await _count_of(conn, projection) < head
                    if not projection.inline:
                        assert await load_checkpoint(conn, projection.name) == head
                    assert (await verify_projection(conn, projection)).identical

    asyncio.run(scenario())


def test_a_batch_goes_through_its_last_event_when_full_and_through_the_head_when_not(open_catalog, migrated_dsn):
    async def scenario() -> None:
        async with open_catalog() as catalog:
            await _build_catalog(catalog)
            await handle_create_namespace(
                CreateNamespace(catalog.warehouse_id, Namespace(("z",)), {}, META), catalog.ctx
            )
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
                head = await log_head(conn)
                taken = await _count_of(conn, MAINTENANCE_HEALTH)
                full = await read_batch(conn, after=0, limit=2, types=MAINTENANCE_HEALTH.types)
                assert len(full.events) == 2
                assert full.through == full.events[-1].position < head
                rest = await read_batch(conn, after=full.through, limit=taken, types=MAINTENANCE_HEALTH.types)
                assert len(rest.events) == taken - 2
                assert rest.through == head > rest.events[-1].position  # past the namespace created last
                bounded = await read_batch(
                    conn, after=0, limit=taken, until=full.through, types=MAINTENANCE_HEALTH.types
                )
                assert (bounded.events, bounded.through) == (full.events, full.through)
                nothing = await read_batch(conn, after=head, limit=10, types=MAINTENANCE_HEALTH.types)
                assert (nothing.events, nothing.through) == ([], head)
                # The health scheduler's own catch-up moves the same checkpoint past what it does not take.
                assert await catch_up_health(conn, batch_size=2) == head
                assert await load_checkpoint(conn, MAINTENANCE_HEALTH.name) == head

    asyncio.run(scenario())
