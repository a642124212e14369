"""Profile `catalog-es serve` under one benchmark workload with py-spy (a flame graph and a top-functions summary).

Run: `python -m tests.bench.profile_server --workload max_load_table [--seconds 15]`; needs the bench extra.
Writes `reports/bench/profile-<workload>.svg` and prints the functions with the most samples.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.bench import bench_servers as servers
from tests.bench import workloads
from tests.bench.load_driver import CatalogClient, Recorder
from tests.bench.polaris_dataset import TreeShape, tree_dataset


def _py_spy() -> str:
    return (
        str(Path(sys.executable).parent / "py-spy") if (Path(sys.executable).parent / "py-spy").exists() else "py-spy"
    )


async def _drive(server: servers.Server, workload: str, params: workloads.Params, rate: float | None) -> None:
    target = workloads.Target(server.name, server.base_url, {})
    ds = tree_dataset(TreeShape())
    async with CatalogClient(target.base_url, target.headers, Recorder()) as client:
        await workloads.create_tree(target, client, ds, params)
    recorder = Recorder()
    cpu = server.cpu_seconds()
    async with CatalogClient(target.base_url, target.headers, recorder) as client:
        if rate is not None:
            await workloads.load_table_at(rate, target, client, ds, params)
        else:
            await getattr(workloads, workload)(target, client, ds, params)
    cpu = server.cpu_seconds() - cpu
    ok = sum(1 for s in recorder.samples if s.status in (200, 204))
    rate = ok / params.duration
    per_op = cpu * 1000 / max(ok, 1)
    print(
        f"{workload}: {ok} ok of {len(recorder.samples)} in {params.duration} s ({rate:.0f}/s), CPU {per_op:.2f} ms/op"
    )


def _top(collapsed: Path, count: int = 25) -> str:
    """Self and inclusive sample counts per function from py-spy's collapsed stacks."""
    own, total, samples = Counter[str](), Counter[str](), 0
    for line in collapsed.read_text().splitlines():
        stack, _, number = line.strip().rpartition(" ")
        if not stack or not number.isdigit():
            continue
        frames = [re.sub(r":\d+\)$", ")", frame) for frame in stack.split(";")]
        n = int(number)
        samples += n
        own[frames[-1]] += n
        for frame in set(frames):
            total[frame] += n
    ours = [
        (frame, n) for frame, n in total.most_common() if re.search(r"\((api|commands|projections|catalog_es)/", frame)
    ]
    lines = [f"{samples} samples; inclusive share of catalog-es functions (top {count}):"]
    lines += [f"  {n / samples:6.1%}  {frame}" for frame, n in ours[:count]]
    lines += [f"self share (top {count}):"]
    lines += [f"  {n / samples:6.1%}  {frame}" for frame, n in own.most_common(count)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="max_load_table")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rate", type=float, help="loadTable at this fixed rate/s (open model) instead of --workload")
    parser.add_argument("--pg-dsn")
    parser.add_argument("--gil", action="store_true", help="sample only the thread holding the GIL (Python CPU)")
    parser.add_argument("--summarize", type=Path, help="only summarise an existing raw py-spy file")
    args = parser.parse_args()
    if args.summarize:
        print(_top(args.summarize))
        return
    work = servers.ROOT / ".bench" / "profile"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    out = servers.ROOT / "reports" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    admin = servers.admin_dsn(servers.ROOT / ".bench", args.pg_dsn)
    server, _ = servers.start_catalog_es(servers.fresh_database(admin, "bench_profile"), work, 1)
    collapsed = work / "profile.txt"
    try:
        spy = subprocess.Popen(
            [
                _py_spy(),
                "record",
                "-p",
                str(server.process.pid),
                "-d",
                str(int(args.seconds) + 3),
                "-f",
                "raw",
                "-o",
                str(collapsed),
                "--nonblocking",
                *(["--gil"] if args.gil else []),
            ],
        )
        params = workloads.Params(duration=args.seconds)
        asyncio.run(_drive(server, args.workload, params, args.rate))
        spy.wait(60)
    finally:
        server.stop()
    summary = _top(collapsed)
    (out / f"profile-{args.workload}.txt").write_text(summary + "\n")
    print(summary)


if __name__ == "__main__":
    main()
