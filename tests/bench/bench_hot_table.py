"""Hot-table benchmark (issue 19): W pyiceberg writers appending to one table, with and without server-side rebase.

Run: `task bench:hot -- [--writers 1,4,16,32] [--seconds 20] [--clients stock,cached] [--history 0]
[--pg-dsn DSN]` or `python -m tests.bench.bench_hot_table`. Starts PostgreSQL (embedded unless `--pg-dsn`) and one
`catalog-es serve` (external DSN, no NATS, one worker, rebase at its default). For each client and W, three runs of
`--seconds` each: W writers on W separate tables (the no-contention ceiling), on one table with
`catalog-es.server-side-rebase=false`, and on one table with it `true`. Each writer is a thread with its own
pyiceberg catalog appending a 10-row batch, pyiceberg's own retries off: a 409 is counted, the table refreshed and
the append redone. Clients: `stock` is pyiceberg 0.12 as released; `cached` adds the client patch of
`pyiceberg_client_cache` (metadata computed once per transaction state, as upstream proposes). `--history N`
seeds every table with N snapshots first (`hot_table_history`). Reports goodput (successful appends/s), 409s per
success, p50/p99 latency of a successful append (first attempt to success, client work included), server and
client CPU per success, and pgbench (1 client) on the same PostgreSQL for scale. Writes
`reports/bench/hot-<time>/result.json`, `result.md` and `goodput.png`. Not a pytest module.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import threading
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tests.bench import bench_servers as servers
from tests.bench import pyiceberg_client_cache
from tests.bench.bench_physics import pgbench_tps
from tests.bench.hot_table_history import seed_history
from tests.bench.hot_table_plot import plot_goodput

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False), NestedField(2, "payload", StringType(), required=False)
)
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("payload", pa.string())])
NO_CLIENT_RETRY = {"commit.retry.num-retries": "0"}
BATCH_ROWS = 10
LAYOUTS = (("separate", False), ("hot", False), ("hot", True))


@dataclass
class Run:
    """One timed run: W writers on one or on W tables."""

    client: str  # "stock" (pyiceberg as released) or "cached" (pyiceberg_client_cache installed)
    history: int  # snapshots each table had before the run
    writers: int
    layout: str  # "hot" (one table) or "separate" (one table per writer)
    rebase: bool
    seconds: float
    successes: int
    conflicts: int
    goodput: float
    conflicts_per_success: float
    p50_ms: float
    p99_ms: float
    server_cpu_ms_per_success: float
    client_cpu_ms_per_success: float

    @staticmethod
    def key(client: str, history: int, writers: int, layout: str, rebase: bool) -> dict[str, Any]:
        """What tells runs apart, as `Run`'s fields."""
        return {"client": client, "history": history, "writers": writers, "layout": layout, "rebase": rebase}


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _catalog(server: servers.Server) -> Catalog:
    uri = server.base_url.split("/v1/")[0]
    return load_catalog("bench", type="rest", uri=uri, warehouse="demo")


def _run(
    server: servers.Server, client: str, history: int, writers: int, layout: str, rebase: bool, seconds: float
) -> Run:
    admin = _catalog(server)
    tag = f"{client}_h{history}_w{writers}_{layout}_{'on' if rebase else 'off'}"
    properties = {**NO_CLIENT_RETRY, "catalog-es.server-side-rebase": str(rebase).lower()}
    names = [f"{tag}_{i if layout == 'separate' else 0}" for i in range(writers)]
    for name in sorted(set(names)):
        admin.create_table(f"hot.{name}", schema=SCHEMA, properties=properties)
        seed_history(server.base_url, "hot", name, history)
    latencies: list[list[float]] = [[] for _ in range(writers)]
    conflicts = [0] * writers
    barrier = threading.Barrier(writers + 1)
    deadline = [0.0]

    def write(i: int) -> None:
        table = _catalog(server).load_table(f"hot.{names[i]}")
        barrier.wait()
        n = 0
        while time.perf_counter() < deadline[0]:
            rows = [{"id": i * 10_000_000 + n * BATCH_ROWS + j, "payload": "x" * 16} for j in range(BATCH_ROWS)]
            batch, started = pa.Table.from_pylist(rows, schema=ARROW), time.perf_counter()
            while True:
                try:
                    table.append(batch)
                    break
                except CommitFailedException:
                    conflicts[i] += 1
                    table = table.refresh()
            latencies[i].append(time.perf_counter() - started)
            n += 1

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    cpu_before, client_before = server.cpu_seconds(), time.process_time()
    deadline[0] = time.perf_counter() + seconds
    started = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cpu, client_cpu = server.cpu_seconds() - cpu_before, time.process_time() - client_before
    return summarize(Run.key(client, history, writers, layout, rebase), wall, latencies, conflicts, cpu, client_cpu)


def summarize(
    key: dict[str, Any],
    wall: float,
    latencies: list[list[float]],
    conflicts: list[int],
    server_cpu: float,
    client_cpu: float,
) -> Run:
    """A timed run's figures from what its writers recorded (seconds) and the CPU both sides used."""
    done = [value for per_writer in latencies for value in per_writer]
    successes, conflicted = len(done), sum(conflicts)
    return Run(
        **key,
        seconds=round(wall, 2),
        successes=successes,
        conflicts=conflicted,
        goodput=round(successes / wall, 2),
        conflicts_per_success=round(conflicted / max(successes, 1), 3),
        p50_ms=round(statistics.median(done) * 1000, 1) if done else float("nan"),
        p99_ms=round(_percentile(done, 0.99) * 1000, 1),
        server_cpu_ms_per_success=round(server_cpu * 1000 / max(successes, 1), 2),
        client_cpu_ms_per_success=round(client_cpu * 1000 / max(successes, 1), 2),
    )


def ceiling_ratio(run: Run, runs: list[Run]) -> float:
    """The run's goodput ÷ the same client's separate-tables goodput at the same W and history."""
    ceiling = next(
        (
            other.goodput
            for other in runs
            if other.layout == "separate"
            and (other.client, other.history, other.writers) == (run.client, run.history, run.writers)
        ),
        0.0,
    )
    return run.goodput / ceiling if ceiling else float("nan")


def markdown(runs: list[Run], pgbench: float | None, header: str) -> str:
    lines = [
        header,
        "",
        "| client | history | W | layout | rebase | appends/s | 409s per success | p50 ms | p99 ms "
        "| server CPU ms/append | client CPU ms/append | ÷ separate |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines.append(
            f"| {run.client} | {run.history} | {run.writers} | {run.layout} | {'on' if run.rebase else 'off'} | "
            f"{run.goodput:,.1f} | {run.conflicts_per_success:.2f} | {run.p50_ms:,.1f} | {run.p99_ms:,.1f} | "
            f"{run.server_cpu_ms_per_success:.2f} | {run.client_cpu_ms_per_success:.2f} | "
            f"{ceiling_ratio(run, runs):.0%} |"
        )
    if pgbench:
        one = next((run for run in runs if run.writers == 1 and run.layout == "hot" and run.rebase), None)
        if one is not None:
            lines += [
                "",
                f"pgbench (commit-shaped UPDATE + INSERT, 1 client, same PostgreSQL): {pgbench:,.0f} tps; "
                f"1 pyiceberg writer: {one.goodput:,.1f} appends/s = {one.goodput / pgbench:.1%} of it "
                "(client-bound: each append writes a Parquet file, a manifest and a manifest list).",
            ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", default="1,4,16,32", help="comma-separated writer counts")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", default="stock,cached", help="comma-separated: stock, cached")
    parser.add_argument("--history", type=int, default=0, help="snapshots seeded into every table first")
    parser.add_argument("--pg-dsn", default=os.environ.get("CATALOG_ES_TEST_PG_DSN"))
    parser.add_argument("--out", default=str(servers.ROOT / "reports" / "bench"))
    args = parser.parse_args()
    stamp = datetime.now(UTC)
    work = Path(args.out) / f"hot-{stamp:%Y%m%dT%H%M%S}"
    work.mkdir(parents=True, exist_ok=True)
    admin = servers.admin_dsn(work, args.pg_dsn)
    dsn = servers.fresh_database(admin, servers.database_name("hot"))
    server, _ = servers.start_catalog_es(dsn, work, workers=1)
    runs: list[Run] = []
    try:
        _catalog(server).create_namespace("hot")
        for client in args.clients.split(","):
            if client == "cached":
                pyiceberg_client_cache.install()
            try:
                for writers in (int(value) for value in args.writers.split(",")):
                    for layout, rebase in LAYOUTS:
                        runs.append(_run(server, client, args.history, writers, layout, rebase, args.seconds))
                        print(json.dumps(asdict(runs[-1])), flush=True)
            finally:
                pyiceberg_client_cache.uninstall()
    finally:
        server.stop()
    tps = pgbench_tps(dsn, clients=1, seconds=int(args.seconds), work=work)
    load = os.getloadavg()[0]
    header = (
        f"hot-table benchmark, {stamp.isoformat(timespec='seconds')}: {os.cpu_count()} CPUs "
        f"({platform.machine()}), loadavg {load:.2f} at end; {args.seconds:g} s per run; catalog-es 1 worker; "
        f"writers are threads of one client process, pyiceberg retries off."
    )
    report = markdown(runs, tps[0] if tps else None, header)
    (work / "result.json").write_text(json.dumps({"runs": [asdict(run) for run in runs], "pgbench_tps": tps}))
    (work / "result.md").write_text(report)
    plot_goodput(runs, work / "goodput.png")
    print(report)


if __name__ == "__main__":
    main()
