"""Log growth per table commit (issue 28): N snapshots committed to one table, in-process, on a real PostgreSQL.

For each N (default 100 and 1,000; `--large` adds 5,000) a fresh database gets one table and N fast appends through
the commit handler (decide, write the metadata file, append, project inline). Printed per N: the commit events'
bytes (raw JSON of `data`, and as stored by PostgreSQL) for the first and the last 10 commits, the largest commit
event (what a NATS message carries), the whole log, commit latency p50 and the catalog's CPU per commit over the
first and last 10 commits (this process: decide, digest, write the file, append; PostgreSQL's CPU is not in it),
the CPU to encode the last metadata file alone (Iceberg's O(history) part), and `projections rebuild catalog`.

Run: `python -m tests.bench.bench_log [--commits 100 1000] [--large] [--pg-dsn postgresql://...]`.
The same file runs on an older checkout (`PYTHONPATH=<checkout>`) for the before figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from api.container import open_services
from api.runtime.database import migrate
from api.settings import load_settings
from catalog_es.identifiers import Namespace
from catalog_es.storage.file_roots import FileStorageRoots
from catalog_es.store.eventstore import EventMetadata
from commands.bootstrap import EnsureDefaultWarehouse, handle_ensure_default_warehouse
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG

META = EventMetadata(actor="bench")
DB = Namespace(("bench",))
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": i, "name": f"c{i}", "type": "long", "required": False} for i in range(1, 11)],
}
_WINDOW = 10


def _append(location: str, step: int, parent: int | None) -> list[dict[str, Any]]:
    """A pyiceberg-like fast append of one file with one row."""
    snapshot: dict[str, Any] = {
        "snapshot-id": 1_000_000 + step,
        "sequence-number": step,
        "timestamp-ms": 1_700_000_000_000 + step,
        "manifest-list": f"{location}/metadata/snap-{1_000_000 + step}-1-{uuid.uuid4()}.avro",
        "summary": {
            "operation": "append",
            "added-data-files": "1",
            "added-records": "1",
            "added-files-size": "1024",
            "total-data-files": str(step),
            "total-records": str(step),
            "total-files-size": str(1024 * step),
            "total-delete-files": "0",
        },
        "schema-id": 0,
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    ref = {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 1_000_000 + step}
    return [{"action": "add-snapshot", "snapshot": snapshot}, ref]


async def _run(dsn: str, commits: int, root: Path) -> dict[str, Any]:
    await migrate(dsn)
    settings = load_settings({}, pg_dsn=dsn, data_dir=str(root))
    roots = FileStorageRoots.of([str(root)], None)
    latencies: list[float] = []
    cpu: list[float] = []
    async with open_services(settings, dsn, pool_size=(1, 4), file_roots=roots) as services:
        ctx = services.ctx
        warehouse = await handle_ensure_default_warehouse(
            EnsureDefaultWarehouse(warehouse_name="bench", location=str(root / "warehouse"), metadata=META), ctx
        )
        assert warehouse is not None
        await handle_create_namespace(CreateNamespace(warehouse, DB, {}, META), ctx)
        created = await handle_create_table(CreateTable(warehouse, DB, "t", SCHEMA, META), ctx)
        location = str(created.metadata["location"])
        document: dict[str, Any] = created.metadata
        for step in range(1, commits + 1):
            parent = 1_000_000 + step - 1 if step > 1 else None
            command = CommitTable(warehouse, DB, "t", [], _append(location, step, parent), META)
            started, started_cpu = time.perf_counter(), time.process_time()
            result = await handle_commit_table(command, ctx)
            latencies.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            document = result.metadata
    encode_started = time.process_time()
    for _ in range(5):
        msgspec.json.encode(document)
    file_cpu = (time.process_time() - encode_started) / 5
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT octet_length(data::text), pg_column_size(data) FROM catalog_events"
            " WHERE type LIKE 'io.catalog-es.table.committed.%' ORDER BY global_position"
        )
        sizes = await cursor.fetchall()
        cursor = await conn.execute(
            "SELECT pg_total_relation_size('catalog_events'), (SELECT count(*) FROM catalog_events)"
        )
        total = await cursor.fetchone()
        assert total is not None
        started = time.perf_counter()
        await rebuild_projection(conn, CATALOG)
        rebuild = time.perf_counter() - started
    first, last = sizes[:_WINDOW], sizes[-_WINDOW:]
    return {
        "commits": commits,
        "raw_first": statistics.mean(raw for raw, _ in first),
        "raw_last": statistics.mean(raw for raw, _ in last),
        "stored_last": statistics.mean(stored for _, stored in last),
        "raw_total": sum(raw for raw, _ in sizes),
        "largest": max(raw for raw, _ in sizes),
        "log_bytes": int(total[0]),
        "events": int(total[1]),
        "p50_ms": statistics.median(latencies[-max(_WINDOW, commits // 10) :]) * 1000,
        "cpu_first_ms": statistics.mean(cpu[:_WINDOW]) * 1000,
        "cpu_last_ms": statistics.mean(cpu[-_WINDOW:]) * 1000,
        "file_cpu_ms": file_cpu * 1000,
        "rebuild_s": rebuild,
    }


def _database(admin_dsn: str, name: str) -> str:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return psycopg.conninfo.make_conninfo(admin_dsn, dbname=name)


def _drop(admin_dsn: str, name: str) -> None:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--large", action="store_true", help="also N = 5,000")
    parser.add_argument(
        "--pg-dsn", default=os.environ.get("CATALOG_ES_BENCH_PG_DSN", "postgresql://127.0.0.1/postgres")
    )
    args = parser.parse_args()
    counts = [*args.commits, *([5000] if args.large else [])]
    print(
        "| N | commit event raw B (first 10) | raw B (last 10) | stored B (last 10) | largest event B"
        " | commit events raw total | catalog_events on disk | commit p50 ms"
        " | catalog CPU ms/commit (first 10 → last 10) | metadata-file encode ms | rebuild s (events/s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for commits in counts:
        name = f"bench_log_{os.getpid()}_{commits}"
        dsn = _database(args.pg_dsn, name)
        try:
            with tempfile.TemporaryDirectory(prefix="bench-log-") as root:
                r = asyncio.run(_run(dsn, commits, Path(root)))
        finally:
            _drop(args.pg_dsn, name)
        print(
            f"| {commits:,} | {r['raw_first']:,.0f} | {r['raw_last']:,.0f} | {r['stored_last']:,.0f} | {r['largest']:,}"
            f" | {r['raw_total'] / 1e6:,.2f} MB | {r['log_bytes'] / 1e6:,.2f} MB | {r['p50_ms']:.1f}"
            f" | {r['cpu_first_ms']:.1f} → {r['cpu_last_ms']:.1f} | {r['file_cpu_ms']:.2f}"
            f" | {r['rebuild_s']:.2f} ({r['events'] / r['rebuild_s']:,.0f}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
