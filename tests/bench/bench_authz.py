"""Authorization benchmark: listing a namespace of 10,000 tables as a user allowed to see 1 % of them vs as the
server admin, and the cost of one authorization check (the guard's query), on real PostgreSQL.

Run: `python -m tests.bench.bench_authz [--tables 10000] [--visible 0.01] [--checks 2000]`. Not a pytest module.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from api.auth.authorizer import Authorizer
from api.auth.listing_filter import ListingAccess
from api.auth.principal import Principal
from api.runtime.database import migrate
from catalog_es.clock import RandomIds, SystemClock
from catalog_es.events import NamespaceCreated, ProjectCreated, ServerBootstrapped, TableCreated, WarehouseCreated
from catalog_es.events.access import PrivilegeGranted
from catalog_es.store.database import Connection, open_pool
from catalog_es.store.eventstore import EventMetadata, EventStore
from projections.catalog.queries import CatalogReadModel
from projections.permissions.queries import has_privilege
from projections.registry import INLINE_PROJECTORS
from tests.bench.bench_relay import _fresh_database, _percentile

ADMIN = Principal(user_id="oidc~admin", name="admin", authenticated=True)
READER = Principal(user_id="oidc~reader", name="reader", authenticated=True)
CREATOR = Principal(user_id="oidc~creator", name="creator", authenticated=True)  # owns every table, not the namespace
PROJECT, WAREHOUSE, NAMESPACE = uuid.UUID(int=0), uuid.uuid4(), uuid.uuid4()
PER_TRANSACTION = 500


async def _seed(store: EventStore, tables: int, visible: float) -> list[uuid.UUID]:
    """The admin bootstraps; a creator makes `tables` tables; the reader may describe every 1/visible-th one."""
    async with store.transaction(EventMetadata(actor=ADMIN.user_id)) as tx:
        await tx.append(ServerBootstrapped(server_id=uuid.uuid4()), expected_version=0)
        await tx.append(ProjectCreated(project_id=PROJECT, name="default"), expected_version=0)
        profile = {"type": "file", "location": "file:///bench/wh"}
        await tx.append(
            WarehouseCreated(warehouse_id=WAREHOUSE, project_id=PROJECT, name="wh", storage_profile=profile),
            expected_version=0,
        )
        event = NamespaceCreated(namespace_id=NAMESPACE, warehouse_id=WAREHOUSE, namespace=["big"], properties={})
        await tx.append(event, expected_version=0)
    ids = [uuid.uuid4() for _ in range(tables)]
    step = max(1, round(1 / visible))
    for start in range(0, tables, PER_TRANSACTION):
        async with store.transaction(EventMetadata(actor="oidc~creator")) as tx:
            for index in range(start, min(tables, start + PER_TRANSACTION)):
                location = f"file:///bench/wh/big/t{index:05d}"
                metadata = {"location": location, "format-version": 2}
                created = TableCreated(
                    table_id=ids[index],
                    warehouse_id=WAREHOUSE,
                    namespace_id=NAMESPACE,
                    name=f"t{index:05d}",
                    metadata_location=f"{location}/metadata/00000.metadata.json",
                    metadata=metadata,
                )
                await tx.append(created, expected_version=0)
                if index % step == 0:
                    grant = PrivilegeGranted(
                        object_kind="table",
                        object_id=ids[index],
                        principal=f"user:{READER.user_id}",
                        privilege="describe",
                    )
                    await tx.append(grant, expected_version=0)
    return ids


async def _timed(work: Callable[[], Awaitable[object]], repeat: int) -> tuple[float, object]:
    timings, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = await work()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings), result


async def _list_all(conn: Connection, access: ListingAccess, read_model: CatalogReadModel, page: int | None) -> int:
    """Every page of the namespace's listing, as the list-tables handler fetches it (page + 1 rows per request)."""
    after, total = "", 0
    while True:
        names = await access.names(conn, "tables", NAMESPACE, after, page + 1 if page else None, read_model.list_tables)
        if page is None or len(names) <= page:
            return total + len(names)
        total += page
        after = names[page - 1].lower()


async def main(tables: int, visible: float, checks: int) -> None:
    with tempfile.TemporaryDirectory() as work:
        dsn = _fresh_database(Path(work))
        await migrate(dsn)
        pool = await open_pool(dsn, min_size=1, max_size=2)
        store = EventStore(pool, clock=SystemClock(), ids=RandomIds(), inline_projectors=INLINE_PROJECTORS)
        started = time.perf_counter()
        ids = await _seed(store, tables, visible)
        print(f"seeded {tables} tables ({visible:.1%} visible to the reader) in {time.perf_counter() - started:.1f} s")
        authz, read_model = Authorizer(enabled=True), CatalogReadModel()
        async with pool.connection() as conn:
            await conn.execute("ANALYZE")
            for page in (None, 1000, 100):
                label = "one request" if page is None else f"pageSize {page}"
                results = {}
                for who in (ADMIN, READER, CREATOR):
                    access = ListingAccess(authz, who)
                    results[who.user_id] = await _timed(lambda a=access, p=page: _list_all(conn, a, read_model, p), 7)
                (admin_ms, admin_n), (reader_ms, reader_n) = results[ADMIN.user_id], results[READER.user_id]
                creator_ms, creator_n = results[CREATOR.user_id]
                print(
                    f"list all tables ({label}): admin {admin_n} names in {admin_ms:.1f} ms;"
                    f" reader {reader_n} names in {reader_ms:.1f} ms; reader/admin = {reader_ms / admin_ms:.2f};"
                    f" owner of each table (no namespace grant) {creator_n} names in {creator_ms:.1f} ms"
                )
            for who, label in ((ADMIN, "admin (server grant)"), (READER, "reader (table grant)")):
                samples = []
                for index in range(checks):
                    table = ids[(index * 100) % len(ids)]
                    started = time.perf_counter()
                    await has_privilege(conn, who.user_id, table, "describe")
                    samples.append((time.perf_counter() - started) * 1e6)
                print(
                    f"authz check as {label}: p50 {_percentile(samples, 0.5):.0f} µs,"
                    f" p99 {_percentile(samples, 0.99):.0f} µs over {checks} checks (one SQL round trip each)"
                )
        await pool.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--visible", type=float, default=0.01)
    parser.add_argument("--checks", type=int, default=2000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.tables, arguments.visible, arguments.checks))
