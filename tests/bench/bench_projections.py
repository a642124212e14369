"""Projection benchmark: rebuild throughput (events/s), projector catch-up and commit → read-model lag p50/p99.

The log is namespace events: `catalog_statistics` takes every one, `maintenance_health` none (its store reads
select only its types, so its checkpoint moves past them without reading them). Events/s are log positions covered
per second. Run: `python -m tests.bench.bench_projections [--events 100000] [--commits 300]`. Not a pytest module.
On an older checkout: `PYTHONPATH=<checkout> PYTHONSAFEPATH=1 python tests/bench/bench_projections.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import psycopg

from api.runtime.database import migrate
from catalog_es.clock import RandomIds, SystemClock
from catalog_es.store.database import open_pool
from catalog_es.store.eventstore import EventStore
from projections.checkpoints import load_checkpoint
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG, MAINTENANCE_HEALTH, STATISTICS, Projection
from projections.runner import ProjectorRunner
from tests.bench.bench_relay import META, _append, _fresh_database, _namespace, _percentile

PER_TRANSACTION = 100


async def _rebuild_rate(dsn: str, events: int) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for projection in (CATALOG, STATISTICS, MAINTENANCE_HEALTH):
            started = time.perf_counter()
            position = await rebuild_projection(conn, projection)
            elapsed = time.perf_counter() - started
            print(f"rebuild {projection.name}: {position} events in {elapsed:.1f} s = {events / elapsed:,.0f} events/s")


async def _catch_up_rate(dsn: str, events: int, projection: Projection) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("UPDATE projector_checkpoints SET position = 0 WHERE name = %s", (projection.name,))
        for table in projection.tables:
            await conn.execute(f"TRUNCATE {table}".encode())
        runner = ProjectorRunner(dsn, projection)
        started = time.perf_counter()
        while await runner.step(conn):
            pass
        elapsed = time.perf_counter() - started
    print(f"projector catch-up {projection.name}: {events / elapsed:,.0f} events/s (batches of 500)")


async def _lag(
    dsn: str, store: EventStore, commits: int, rate: float, projection: Projection, first: int
) -> list[float]:
    """Commit one event at a time at `rate` (namespaces `first`, ...); time until the projector's checkpoint passes
    each commit."""
    running = asyncio.create_task(ProjectorRunner(dsn, projection).run())
    lags: list[float] = []
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as watcher:
        for index in range(commits):
            async with store.transaction(META) as tx:
                await tx.append(_namespace(first + index), expected_version=0)
            committed = time.perf_counter()
            position = await store.head()
            while await load_checkpoint(watcher, projection.name) < position:  # noqa: ASYNC110 - polls the DB
                await asyncio.sleep(0.0005)
            lags.append((time.perf_counter() - committed) * 1000)
            await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - committed)))
    running.cancel()
    return lags


async def main(events: int, commits: int, rate: float) -> None:
    with tempfile.TemporaryDirectory() as work:
        dsn = _fresh_database(Path(work))
        await migrate(dsn)
        pool = await open_pool(dsn, min_size=1, max_size=4)
        store = EventStore(pool, clock=SystemClock(), ids=RandomIds(), inline_projectors=[CATALOG.project])
        started = time.perf_counter()
        await _append(store, events, PER_TRANSACTION)
        print(f"appended {events} events in {time.perf_counter() - started:.1f} s")
        await _rebuild_rate(dsn, events)
        for projection in (STATISTICS, MAINTENANCE_HEALTH):
            await _catch_up_rate(dsn, events, projection)
        for run, projection in enumerate((STATISTICS, MAINTENANCE_HEALTH)):
            lags = await _lag(dsn, store, commits, rate, projection, 10_000_000 * (run + 1))
            print(f"commit → {projection.name} checkpoint lag over {commits} commits at {rate:.0f}/s:")
            p50, p99 = _percentile(lags, 0.5), _percentile(lags, 0.99)
            print(f"  p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(lags):.1f} ms")
        await pool.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--rate", type=float, default=100.0, help="commits per second in the lag run")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.events, arguments.commits, arguments.rate))
