"""Server CPU per loadTable and per commit of several servers measured by turns (A/B), for a busy shared machine.

Run: `python -m tests.bench.bench_alternating [--checkout main=/path/to/worktree] [--rounds 5] [--seconds 8]`.
Starts one PostgreSQL (embedded unless `--pg-dsn`) and, each on its own database, `catalog-es serve` of this
checkout (`this`), of every `--checkout NAME=PATH` (served with this environment's packages) and the SqlCatalog
shim (unless `--no-shim`); creates the tree dataset on each, then runs rounds: in each, every server in turn (the
order rotating from round to round) takes loadTable at maximum throughput (or at `--load-rate`), then commits at
maximum throughput.
Prints the medians (and ranges) of server CPU per successful operation, the shim's ÷ each catalog's, and the load
averages seen. CPU per operation, not throughput: the machine's other work changes the rate far more than the CPU
each operation costs. Not a pytest module.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from tests.bench import bench_servers as servers
from tests.bench.load_driver import CatalogClient, Recorder
from tests.bench.polaris_dataset import Dataset, TreeShape, tree_dataset
from tests.bench.workloads import Outcome, Params, Target, create_tree, load_table_at, max_commits, max_load_table

Workload = Callable[[Target, CatalogClient, Dataset, Params], Awaitable[Outcome]]
WORKLOADS: dict[str, Workload] = {"loadTable": max_load_table, "commit": max_commits}


async def _cpu_per_op(server: servers.Server, target: Target, fn: Workload, ds: Dataset, p: Params) -> float:
    """Server CPU ms per successful operation of one timed run of `fn`."""
    async with CatalogClient(target.base_url, target.headers, Recorder()) as client:
        before = server.cpu_seconds()
        outcome = await fn(target, client, ds, p)
        cpu = server.cpu_seconds() - before
    ok = sum(1 for sample in outcome.samples if sample.status == 200)
    return cpu * 1000 / max(ok, 1)


async def _create(target: Target, ds: Dataset, p: Params) -> None:
    async with CatalogClient(target.base_url, target.headers, Recorder()) as client:
        await create_tree(target, client, ds, p)


def _row(name: str, values: list[float]) -> str:
    return f"| {name} | {statistics.median(values):.3f} | {min(values):.3f}-{max(values):.3f} | {len(values)} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", default=[], help="NAME=PATH: also serve that checkout")
    parser.add_argument("--no-shim", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0, help="per workload and server in each round")
    parser.add_argument("--workloads", default="loadTable,commit")
    parser.add_argument(
        "--load-rate", type=float, help="loadTable at this rate/s (open model: the same arrivals for every server)"
    )
    parser.add_argument("--pg-dsn")
    args = parser.parse_args()
    work = servers.ROOT / ".bench" / "alternating"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    admin = servers.admin_dsn(servers.ROOT / ".bench", args.pg_dsn)
    checkouts = [("this", None), *((n, Path(p)) for n, _, p in (c.partition("=") for c in args.checkout))]
    started: list[tuple[servers.Server, Target]] = []
    params = Params(duration=args.seconds)
    ds = tree_dataset(TreeShape())
    loads: list[float] = []
    cpu: dict[tuple[str, str], list[float]] = {}
    workloads = dict(WORKLOADS)
    if args.load_rate:
        workloads["loadTable"] = partial(load_table_at, args.load_rate)
    try:
        for name, path in checkouts:
            dsn = servers.fresh_database(admin, f"bench_ab_{name}")
            server, _ = servers.start_catalog_es(dsn, work, 1, checkout=path, name=name)
            started.append((server, Target(server.name, server.base_url, server.headers)))
        if not args.no_shim:
            shim = servers.start_shim(servers.fresh_database(admin, "bench_ab_shim"), work)
            started.append((shim, Target(shim.name, shim.base_url, shim.headers, lacks=frozenset({"views"}))))
        for _, target in started:
            asyncio.run(_create(target, ds, params))
        for round_ in range(args.rounds):
            order = started[round_ % len(started) :] + started[: round_ % len(started)]
            for workload in args.workloads.split(","):
                for server, target in order:
                    loads.append(os.getloadavg()[0])
                    per_op = asyncio.run(_cpu_per_op(server, target, workloads[workload], ds, params))
                    cpu.setdefault((workload, server.name), []).append(per_op)
                    print(f"round {round_ + 1} {workload} {server.name}: {per_op:.3f} ms/op (load {loads[-1]:.1f})")
    finally:
        for server, _ in started:
            server.stop()
    mode = f"loadTable at {args.load_rate:g}/s" if args.load_rate else "loadTable at maximum throughput"
    print(f"\nload average {min(loads):.1f}-{max(loads):.1f}; {args.rounds} rounds of {args.seconds:g} s; {mode}\n")
    print("| workload, server | median CPU ms/op | range | runs |\n|---|---|---|---|")
    for (workload, name), values in cpu.items():
        print(_row(f"{workload}, {name}", values))
    for workload in args.workloads.split(","):
        shim_values = cpu.get((workload, "sqlcatalog-shim"))
        for name, _ in checkouts:
            if shim_values and (workload, name) in cpu:
                ratio = statistics.median(shim_values) / statistics.median(cpu[(workload, name)])
                print(f"{workload}: shim ÷ {name} = {ratio:.2f}x")


if __name__ == "__main__":
    main()
