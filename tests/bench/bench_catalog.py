"""Catalog benchmark: Polaris-style workloads against catalog-es and its peers on one PostgreSQL, plus physics ratios.

Run: `task bench -- [--quick]` or `python -m tests.bench.bench_catalog [--quick] [--pg-dsn DSN] [--scale-tables N]`.
Starts PostgreSQL (embedded unless `--pg-dsn`), then one server at a time on its own database of that server:
`catalog-es serve` (external DSN, no NATS), the SqlCatalog REST shim, lakana-server (own venv in
`.bench/peers-venv`), the hello-world; runs pgbench. Writes `reports/bench/<time>/result.json`,
`result.md` and a latency plot per workload. Not a pytest module.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import psycopg

from tests.bench import bench_servers as servers
from tests.bench.bench_physics import hello_world_rate, pgbench_tps
from tests.bench.bench_report import details_markdown, markdown, op_stats, physics_markdown, plot
from tests.bench.load_driver import CatalogClient, Recorder, Sample
from tests.bench.polaris_dataset import Dataset, TreeShape, tree_dataset
from tests.bench.workloads import (
    Outcome,
    Params,
    Target,
    create_tree,
    fixed_rate_commits,
    list_pages,
    load_table_at,
    long_history,
    max_commits,
    max_load_table,
    read_tree,
    read_update,
    skewed,
    transactions,
)

Workload = Callable[[Target, CatalogClient, Dataset, Params], Awaitable[Outcome]]


def _params(args: argparse.Namespace) -> Params:
    if args.quick:
        p = Params(duration=3.0, mix_rate=50.0, list_tables=200, snapshots=500, snapshot_batch=250, probe_loads=50)
    else:
        p = Params()
    if args.duration:
        p.duration = args.duration
    if args.list_tables:
        p.list_tables = args.list_tables
    if args.snapshots:
        p.snapshots = args.snapshots
    p.load_workers, p.commit_workers = args.load_clients, args.commit_clients
    return p


async def _run(
    server: servers.Server, target: Target, fn: Workload, ds: Dataset, p: Params, connections: int = 256
) -> tuple[dict[str, Any], list[Sample]]:
    recorder = Recorder()
    gc.collect()
    gc.freeze()  # the earlier workloads' results stay out of the collector's walks (no pauses in the generator)
    async with CatalogClient(target.base_url, target.headers, recorder, connections) as client:
        cpu_before = server.cpu_seconds()
        outcome = await fn(target, client, ds, p)
        cpu = server.cpu_seconds() - cpu_before
    ops = op_stats(outcome.samples, outcome.wall)
    count = len(outcome.samples)
    record = {
        "wall_s": outcome.wall,
        "cpu_s": cpu,
        "cpu_ms_per_op": cpu * 1000 / count if count else None,
        "rss_mb": server.rss_mb(),
        "notes": outcome.notes,
        "figures": outcome.figures,
        "ops": ops,
    }
    return record, outcome.samples


PLAN: list[tuple[str, Workload | None]] = [
    ("create_tree", create_tree),
    ("read_tree", read_tree),
    ("max_load_table", max_load_table),
    ("load_table_half", None),  # at half of the maximum each server reached
    ("max_commits", max_commits),
    ("read_update", read_update),
    ("fixed_rate_commits", fixed_rate_commits),
    ("skewed", skewed),
    ("transactions", transactions),
    ("list_pages", list_pages),
    ("long_history", long_history),
]


def _per_op_cpu(record: dict[str, Any], workload: str, op: str) -> float | None:
    data = record["workloads"][workload]
    ok = data["ops"].get(op, {}).get("ok", 0)
    return float(data["cpu_s"]) * 1000 / ok if ok else None


async def _bench_all(
    pairs: list[tuple[servers.Server, Target]],
    ds: Dataset,
    p: Params,
    samples: dict[str, dict[str, list[Sample]]],
    after: dict[str, Callable[[], Awaitable[None]]],
) -> dict[str, Any]:
    """Each workload against every server in turn, so machine load drifts alike for all of them."""
    records: dict[str, Any] = {t.name: {"rss_idle_mb": s.rss_mb(), "workloads": {}} for s, t in pairs}
    for name, planned in PLAN:
        for server, target in pairs:
            record = records[target.name]
            fn, connections = planned, 256
            if fn is None:  # the maximum's clients, now sending on a schedule: as many connections as they had
                max_rate = record["workloads"]["max_load_table"]["figures"]["max_rate"]
                fn, connections = partial(load_table_at, max(1.0, max_rate / 2)), p.load_workers
            started = time.perf_counter()
            outcome = await _run(server, target, fn, ds, p, connections)
            record["workloads"][name], samples.setdefault(name, {})[target.name] = outcome
            print(f"  {name} {target.name}: {time.perf_counter() - started:.1f} s", flush=True)
        if name in after:
            await after[name]()
    for server, target in pairs:
        record = records[target.name]
        record["cpu_ms_per_load_table"] = _per_op_cpu(record, "max_load_table", "loadTable")
        record["cpu_ms_per_commit"] = _per_op_cpu(record, "max_commits", "commitTable")
        record["rss_mb"] = server.rss_mb()
    return records


def _rebuild_speed(dsn: str, work: Path) -> dict[str, float]:
    """`catalog-es projections rebuild --all` on the run's log: seconds and events/s."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM catalog_events").fetchone()
    events = int(row[0]) if row else 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_ES__")} | {"CATALOG_ES__PG_DSN": dsn}
    started = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "catalog-es"), "projections", "rebuild", "--all"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=work,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return {"events": events, "error": 1.0}
    return {"events": events, "seconds": seconds, "events_per_second": events / seconds}


def _environment(admin: str) -> dict[str, Any]:
    with psycopg.connect(admin) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        sync = conn.execute("SHOW synchronous_commit").fetchone()
    return {
        "time": datetime.now(UTC).isoformat(),
        "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "postgres": version[0] if version else None,
        "synchronous_commit": sync[0] if sync else None,
    }


async def main_async(args: argparse.Namespace) -> Path:
    p = _params(args)
    shape = TreeShape.scaled(args.scale_tables) if args.scale_tables else TreeShape()
    ds = tree_dataset(shape)
    work = servers.ROOT / ".bench" / "run"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    out = Path(args.out) / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out.mkdir(parents=True, exist_ok=True)
    admin = servers.admin_dsn(servers.ROOT / ".bench", args.pg_dsn)
    result: dict[str, Any] = {
        "environment": _environment(admin),
        "params": asdict(p),
        "dataset": {"namespaces": len(ds.namespaces), "tables": len(ds.tables), "views": len(ds.views)},
        "servers": {},
    }
    samples: dict[str, dict[str, list[Sample]]] = {}
    print(f"dataset: {result['dataset']}; work in {work}", flush=True)

    ours_dsn = servers.fresh_database(admin, "bench_catalog_es")
    ours, cold = servers.start_catalog_es(ours_dsn, work, args.workers)
    pairs = [(ours, Target(ours.name, ours.base_url, ours.headers))]
    hello: servers.Server | None = None
    physics: dict[str, Any] = {}
    try:
        if "shim" in args.peers:
            shim = servers.start_shim(servers.fresh_database(admin, "bench_shim"), work)
            pairs.append(
                (shim, Target(shim.name, shim.base_url, shim.headers, lacks=frozenset({"views", "transactions"})))
            )
        if "lakana" in args.peers:
            lakana = servers.start_lakana(servers.fresh_database(admin, "bench_lakana"), work)
            if lakana is None:
                print("lakana-server could not be installed: skipped", flush=True)
            else:
                lacks = frozenset({"views", "head", "transactions"})
                pairs.append(
                    (lakana, Target(lakana.name, lakana.base_url, lakana.headers, root=("bronze",), lacks=lacks))
                )
        hello = servers.start_hello_world(work)
        pgbench_dsn = servers.fresh_database(admin, "bench_pgbench")

        async def hello_world() -> None:
            assert hello is not None
            physics["hello_world_rate"] = await hello_world_rate(hello, p.load_workers, p.duration)

        async def pgbench() -> None:
            found = pgbench_tps(pgbench_dsn, p.commit_workers, max(3, int(p.duration)), work)
            physics["pgbench_tps"], physics["pgbench_binary"] = found if found else (None, "not found")

        after = {"max_load_table": hello_world, "max_commits": pgbench}
        result["servers"] = await _bench_all(pairs, ds, p, samples, after)
    finally:
        for server, _ in pairs:
            server.stop()
        if hello:
            hello.stop()
    result["servers"][ours.name]["cold_start_s"] = cold
    result["servers"][ours.name]["rebuild"] = _rebuild_speed(ours_dsn, work)
    ours_record = result["servers"]["catalog-es"]
    result["physics"] = physics | {
        "our_load_rate": ours_record["workloads"]["max_load_table"]["figures"]["max_rate"],
        "our_commit_rate": ours_record["workloads"]["max_commits"]["figures"]["max_rate"],
        "pgbench_clients": p.commit_workers,
    }
    result["environment"]["loadavg_end"] = os.getloadavg()

    (out / "result.json").write_bytes(msgspec.json.format(msgspec.json.encode(result)))
    env = result["environment"]
    summary = "\n\n".join(
        [
            f"catalog-es benchmark, {env['time']}: {env['cpus']} CPUs, loadavg {env['loadavg_start'][0]:.2f} at "
            f"start, {env['loadavg_end'][0]:.2f} at end; PostgreSQL {env['postgres']} "
            f"(synchronous_commit={env['synchronous_commit']}); "
            f"dataset {result['dataset']}; {p.duration:g} s per timed workload; catalog-es workers: {args.workers}.",
            markdown(result),
            physics_markdown(result),
            f"catalog-es cold start (spawn → first /config 200): {ours_record['cold_start_s']:.2f} s; "
            f"projection rebuild: {_fmt_rebuild(ours_record['rebuild'])}.",
            "### Per workload\n\n" + details_markdown(result),
        ]
    )
    (out / "result.md").write_text(summary + "\n")
    plot(samples, out)
    latest = Path(args.out) / "latest.md"
    latest.write_text(summary + "\n")
    print(summary.split("### Per workload")[0], flush=True)
    print(f"written: {out}", flush=True)
    return out


def _fmt_rebuild(rebuild: dict[str, float]) -> str:
    if "seconds" not in rebuild:
        return "failed"
    rate = f"{rebuild['events_per_second']:,.0f} events/s, process start included"
    return f"{rebuild['events']:.0f} events in {rebuild['seconds']:.2f} s ({rate})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run (3 s per workload, small histories)")
    parser.add_argument("--pg-dsn", help="an existing PostgreSQL (admin DSN) instead of the embedded one")
    parser.add_argument("--scale-tables", type=int, help="tables in the tree (default 40; up to 100000)")
    parser.add_argument("--list-tables", type=int, help="tables in the paging namespace (default 1000)")
    parser.add_argument("--snapshots", type=int, help="snapshots in the long-history table (default 10000)")
    parser.add_argument("--duration", type=float, help="seconds per timed workload (default 20)")
    parser.add_argument("--workers", type=int, default=1, help="catalog-es server workers (default 1)")
    parser.add_argument("--load-clients", type=int, default=16)
    parser.add_argument("--commit-clients", type=int, default=8)
    parser.add_argument("--peers", default="shim,lakana", help="comma-separated: shim, lakana (or empty)")
    parser.add_argument("--out", default=str(servers.ROOT / "reports" / "bench"))
    args = parser.parse_args()
    args.peers = {peer for peer in args.peers.split(",") if peer}
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
