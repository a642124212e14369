"""Log growth per table commit (issue 28): N snapshots committed to one table, in-process, on a real PostgreSQL.

For each N (default 100 and 1,000; `--large` adds 5,000) a fresh database gets one table and N fast appends through
the commit handler (decide, write the metadata file, append, project inline). Printed per N: the commit events'
bytes (raw JSON of `data`, and as stored by PostgreSQL) for the first and the last 10 commits, the largest commit
event (what a NATS message carries), the whole log, commit latency p50 and this process's CPU per commit (median
of the first and of the last 10 commits, after an unprinted warm-up run; PostgreSQL's CPU is not in it), split
three ways: writing the metadata file (encoding the document and writing it: Iceberg's O(history) part), the
digest of the document the event records, and the catalog's own work (the rest: read, decide, append, project),
then `projections rebuild catalog`. The split times the functions that do each part in the thread that runs them
(`_Split`), on this code and on an older checkout alike.

Run: `python -m tests.bench.bench_log [--commits 100 1000] [--large] [--pg-dsn postgresql://...]`.
The same file runs on an older checkout for the before figures: `PYTHONPATH=<checkout> PYTHONSAFEPATH=1 python
tests/bench/bench_log.py` (run as a file, so that the checkout's modules are timed).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
_WARM_UP = 3

# (module, function, part): the functions the split times. This code encodes the document once (for the file, the
# read model and the digest; `encode_after` splices it from the previous commit's JSON, `encode_metadata` before
# it encoded it whole) and hashes those bytes; an older checkout encodes in `write_metadata` and in
# `metadata_digest`. A name a checkout does not have is skipped.
_TIMED = (
    ("catalog_es.storage.files", "WarehouseStorage.write_metadata", "file"),
    ("commands.commit_table", "encode_metadata", "file"),
    ("commands.commit_table", "encode_after", "file"),
    ("commands.commit_table", "digest_of", "digest"),
    ("commands.commit_table", "metadata_digest", "digest"),
)


class _Split:
    """CPU spent in the timed functions, per part, in the thread that ran them (the file is written off the loop)."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {"file": 0.0, "digest": 0.0}

    def timed(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.cpu[part] += time.thread_time() - started

        return run

    def take(self) -> dict[str, float]:
        taken, self.cpu = self.cpu, {"file": 0.0, "digest": 0.0}
        return taken

    @contextmanager
    def installed(self) -> Iterator[None]:
        undo: list[tuple[Any, str, Any]] = []
        for module_name, qualified, part in _TIMED:
            owner: Any = importlib.import_module(module_name)
            *path, name = qualified.split(".")
            for attribute in path:
                owner = getattr(owner, attribute)
            original = getattr(owner, name, None)
            if original is None:
                continue
            undo.append((owner, name, original))
            setattr(owner, name, self.timed(part, original))
        try:
            yield
        finally:
            for owner, name, original in reversed(undo):
                setattr(owner, name, original)


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
    parts: list[dict[str, float]] = []
    split = _Split()
    async with open_services(settings, dsn, pool_size=(1, 4), file_roots=roots) as services:
        ctx = services.ctx
        warehouse = await handle_ensure_default_warehouse(
            EnsureDefaultWarehouse(warehouse_name="bench", location=str(root / "warehouse"), metadata=META), ctx
        )
        assert warehouse is not None
        await handle_create_namespace(CreateNamespace(warehouse, DB, {}, META), ctx)
        created = await handle_create_table(CreateTable(warehouse, DB, "t", SCHEMA, META), ctx)
        location = str(created.metadata["location"])
        with split.installed():
            for step in range(1, commits + 1):
                parent = 1_000_000 + step - 1 if step > 1 else None
                command = CommitTable(warehouse, DB, "t", [], _append(location, step, parent), META)
                split.take()
                started, started_cpu = time.perf_counter(), time.process_time()
                await handle_commit_table(command, ctx)
                latencies.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
                parts.append(split.take())
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
        **_cpu_split(cpu[:_WINDOW], parts[:_WINDOW], "first"),
        **_cpu_split(cpu[-_WINDOW:], parts[-_WINDOW:], "last"),
        "rebuild_s": rebuild,
    }


_PARTS = ("cpu", "file", "digest", "own")


def _first_to_last(result: dict[str, Any], part: str) -> str:
    return f"{result[f'{part}_first_ms']:.2f} → {result[f'{part}_last_ms']:.2f}"


def _cpu_split(cpu: list[float], parts: list[dict[str, float]], window: str) -> dict[str, float]:
    """Median ms per commit of the window (a shared machine's stalls stay out of it): the whole process, the
    metadata file, the digest, and the rest."""
    own = [total - part["file"] - part["digest"] for total, part in zip(cpu, parts, strict=True)]
    return {
        f"cpu_{window}_ms": statistics.median(cpu) * 1000,
        f"file_{window}_ms": statistics.median(part["file"] for part in parts) * 1000,
        f"digest_{window}_ms": statistics.median(part["digest"] for part in parts) * 1000,
        f"own_{window}_ms": statistics.median(own) * 1000,
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
        " | process CPU ms/commit (first 10 → last 10) | metadata file ms | digest ms | catalog's own ms"
        " | rebuild s (events/s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for commits in [_WARM_UP, *counts]:  # the first run pays the process's one-time costs: not printed
        name = f"bench_log_{os.getpid()}_{commits}"
        dsn = _database(args.pg_dsn, name)
        try:
            with tempfile.TemporaryDirectory(prefix="bench-log-") as root:
                r = asyncio.run(_run(dsn, commits, Path(root)))
        finally:
            _drop(args.pg_dsn, name)
        if commits == _WARM_UP:
            continue
        print(
            f"| {commits:,} | {r['raw_first']:,.0f} | {r['raw_last']:,.0f} | {r['stored_last']:,.0f} | {r['largest']:,}"
            f" | {r['raw_total'] / 1e6:,.2f} MB | {r['log_bytes'] / 1e6:,.2f} MB | {r['p50_ms']:.1f}"
            f" | {' | '.join(_first_to_last(r, part) for part in _PARTS)}"
            f" | {r['rebuild_s']:.2f} ({r['events'] / r['rebuild_s']:,.0f}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
