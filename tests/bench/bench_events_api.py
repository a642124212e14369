"""Events endpoint benchmark: paging a warehouse's slice of a 100k-event log, with and without per-object access
checks and filters, and the query plan of one page. Real PostgreSQL.

Also the as-of prefixes' first request (a replay) and snapshot size.

Run: `python -m tests.bench.bench_events_api [--events 100000] [--tables 10000] [--explain]`. Not a pytest module.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from api.runtime.database import migrate
from catalog_es.clock import RandomIds, SystemClock
from catalog_es.events import NamespaceCreated, TableCommitted, TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.database import open_pool
from catalog_es.store.eventstore import EventMetadata, EventStore
from projections.audit.iceberg_events import _QUERY, EventQuery, read_iceberg_events
from projections.catalog.as_of import AsOfCache, AsOfReadModel
from tests.bench.bench_relay import _fresh_database

META = EventMetadata(actor="bench", request_id="bench")
PROJECT = uuid.UUID(int=9)
TABLES_PER_NAMESPACE = 20
GRANTED_EVERY = 100  # the restricted user may describe 1 % of the tables


async def _fill(store: EventStore, dsn: str, events: int, tables_count: int) -> tuple[uuid.UUID, list[uuid.UUID]]:
    """Two warehouses, 90 % of the tables in the first: namespaces, tables and commits to them, round-robin."""
    main, other = uuid.uuid4(), uuid.uuid4()
    tables: list[tuple[uuid.UUID, uuid.UUID, uuid.UUID, int]] = []  # table, namespace, warehouse, version
    objects: list[tuple[Any, ...]] = [(main, "warehouse", [main, PROJECT, SERVER_OBJECT_ID])]
    objects.append((other, "warehouse", [other, PROJECT, SERVER_OBJECT_ID]))
    written = 0
    async with store.transaction(META, serialised=False) as tx:
        for index in range(tables_count // TABLES_PER_NAMESPACE):
            warehouse = main if index % 10 else other
            namespace = uuid.uuid4()
            event = NamespaceCreated(
                namespace_id=namespace, warehouse_id=warehouse, namespace=[f"n{index}"], properties={}
            )
            await tx.append(event, expected_version=0)
            objects.append((namespace, "namespace", [namespace, warehouse, PROJECT, SERVER_OBJECT_ID]))
            for number in range(TABLES_PER_NAMESPACE):
                table = uuid.uuid4()
                created = TableCreated(
                    table_id=table,
                    warehouse_id=warehouse,
                    namespace_id=namespace,
                    name=f"t{number}",
                    metadata_location="s3://b/m.json",
                    metadata={},
                )
                await tx.append(created, expected_version=0)
                tables.append((table, namespace, warehouse, 1))
                objects.append((table, "table", [table, namespace, warehouse, PROJECT, SERVER_OBJECT_ID]))
            written += 1 + TABLES_PER_NAMESPACE
    while written < events:
        async with store.transaction(META, serialised=False) as tx:
            for slot in range(min(1000, events - written)):
                table, namespace, warehouse, version = tables[(written + slot) % len(tables)]
                update = {"action": "set-properties", "updates": {"n": str(written + slot)}}
                commit = TableCommitted(
                    table_id=table,
                    warehouse_id=warehouse,
                    requirements=[],
                    updates=[update],
                    previous_metadata_location="",
                    metadata_location="",
                    applied_at_ms=0,
                    metadata={},
                )
                await tx.append(commit, expected_version=version)
                tables[(written + slot) % len(tables)] = (table, namespace, warehouse, version + 1)
            written += min(1000, events - written)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.cursor().executemany("INSERT INTO authz_objects (id, kind, ancestors) VALUES (%s, %s, %s)", objects)
        granted = [t for i, (t, _, w, _) in enumerate(tables) if w == main and i % GRANTED_EVERY == 0]
        conn.cursor().executemany(
            "INSERT INTO authz_grants (object_id, principal, privilege) VALUES (%s, 'user:bench', 'select')",
            [(t,) for t in granted],
        )
        conn.execute("ANALYZE")
    return main, granted


async def _page_through(dsn: str, query: EventQuery) -> tuple[int, int, float]:
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        started, found, pages = time.perf_counter(), 0, 0
        async with pool.connection() as conn:
            while True:
                page = await read_iceberg_events(conn, query)
                pages += 1
                found += len(page.events)
                if page.last_position >= page.head:
                    break
                query = EventQuery(
                    **{**{f: getattr(query, f) for f in query.__struct_fields__}, "after": page.last_position}
                )
        return found, pages, time.perf_counter() - started
    finally:
        await pool.close()


def _explain(dsn: str, query: EventQuery) -> None:
    conditions, params = query.conditions()
    params.update(warehouse=str(query.warehouse_id), after=query.after, scan=query.scan_limit, page=query.page_size)
    statement = sql.SQL("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ") + sql.SQL(_QUERY).format(conditions=conditions)
    with psycopg.connect(dsn) as conn:
        for (line,) in conn.execute(statement, params).fetchall():
            print(line)


async def _as_of(dsn: str, warehouse: uuid.UUID) -> None:
    """The first request under an as-of prefix replays the log (then cached): its latency and the snapshot's size."""
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            head = int((await (await conn.execute("SELECT position FROM catalog_event_counter")).fetchone() or [0])[0])
            tracemalloc.start()
            cache = AsOfCache(2)
            started = time.perf_counter()
            model = AsOfReadModel(cache, head // 2)
            names = await model.list_namespaces(conn, warehouse, None, "", 10)
            first = time.perf_counter() - started
            size = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            started = time.perf_counter()
            table = await model.table_document(conn, warehouse, Namespace((names[0][0],)), "t0")
            load = time.perf_counter() - started
            print(
                f"as-of position {head // 2}: first request (replay) {first:.2f} s, snapshot {size / 2**20:.1f} MiB;"
                f" then loadTable {load * 1000:.1f} ms ({'found' if table else 'missing'})"
            )
            for step in (1_000, head // 4):  # position N+k after N: replays only the k events in between
                started = time.perf_counter()
                later = AsOfReadModel(cache, min(head // 2 + step, head))
                await later.list_namespaces(conn, warehouse, None, "", 10)
                elapsed = (time.perf_counter() - started) * 1000
                print(f"as-of position N+{step} (from the cached snapshot before it): first request {elapsed:.0f} ms")
    finally:
        await pool.close()


async def main(events: int, explain: bool, tables_count: int = 10_000) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-events-") as work:
        dsn = _fresh_database(Path(work))
        await migrate(dsn)
        pool = await open_pool(dsn, min_size=1, max_size=2)
        try:
            store = EventStore(pool, clock=SystemClock(), ids=RandomIds())
            started = time.perf_counter()
            warehouse, granted = await _fill(store, dsn, events, tables_count)
            print(f"filled {events} events in {time.perf_counter() - started:.1f} s")
        finally:
            await pool.close()
        cases = {
            "everything (a warehouse admin)": EventQuery(warehouse_id=warehouse, page_size=1000),
            "1 % of the tables describable": EventQuery(
                warehouse_id=warehouse, page_size=1000, principals=["user:bench"]
            ),
            "one namespace by name": EventQuery(warehouse_id=warehouse, page_size=1000, names=[["n1"]]),
            "one table by id": EventQuery(warehouse_id=warehouse, page_size=1000, object_ids=[granted[0]]),
        }
        for name, query in cases.items():
            found, pages, elapsed = await _page_through(dsn, query)
            print(f"{name}: {found} events in {pages} requests, {elapsed:.2f} s, {found / elapsed:,.0f} events/s")
            if explain:
                _explain(dsn, query)
        await _as_of(dsn, warehouse)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--explain", action="store_true")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.events, arguments.explain, arguments.tables))
