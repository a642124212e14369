"""Benchmark results: per-operation statistics, the JSON record, the Markdown tables and latency plots."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt

from tests.bench.load_driver import Sample

OK = frozenset({200, 204})


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    index = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[index]


def op_stats(samples: list[Sample], wall: float) -> dict[str, dict[str, float]]:
    """Per operation: count, ok, errors, 409s, attempts, throughput (ok/s) and latency percentiles (ms)."""
    by_op: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_op[sample.op].append(sample)
    stats = {}
    for op, group in sorted(by_op.items()):
        ok = [s for s in group if s.status in OK]
        latencies = sorted(s.latency * 1000 for s in ok)
        stats[op] = {
            "count": len(group),
            "ok": len(ok),
            "errors": len(group) - len(ok),
            "conflicts_409": sum(s.conflicts for s in group),
            "attempts": sum(s.attempts for s in group),
            "throughput": len(ok) / wall if wall > 0 else math.nan,
            "p50_ms": percentile(latencies, 0.50),
            "p90_ms": percentile(latencies, 0.90),
            "p99_ms": percentile(latencies, 0.99),
            "p999_ms": percentile(latencies, 0.999),
            "max_ms": latencies[-1] if latencies else math.nan,
        }
    return stats


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def _ratio(ours: float | None, peer: float | None, *, lower_is_better: bool) -> str:
    if ours is None or peer is None or math.isnan(ours) or math.isnan(peer) or ours == 0 or peer == 0:
        return "n/a"
    return f"{(peer / ours) if lower_is_better else (ours / peer):.2f}x"


# (label, workload, op, field, lower is better)
HEADLINES: list[tuple[str, str, str, str, bool]] = [
    ("loadTable max throughput (req/s, closed, 16 clients)", "max_load_table", "loadTable", "throughput", False),
    ("loadTable p50 at max (ms)", "max_load_table", "loadTable", "p50_ms", True),
    (
        "loadTable p99 at half of max rate (ms, open model, 16 connections)",
        "load_table_half",
        "loadTable",
        "p99_ms",
        True,
    ),
    ("commit max throughput (commits/s, closed, 8 clients)", "max_commits", "commitTable", "throughput", False),
    ("commit p50 at max (ms)", "max_commits", "commitTable", "p50_ms", True),
    ("commit p99 at fixed rate (ms)", "fixed_rate_commits", "commitTable", "p99_ms", True),
    ("createTable p50 (ms)", "create_tree", "createTable", "p50_ms", True),
    ("createTable p99 (ms)", "create_tree", "createTable", "p99_ms", True),
    ("read/update mix: loadTable p99 (ms)", "read_update", "loadTable", "p99_ms", True),
    ("read/update mix: commitTable p99 (ms)", "read_update", "commitTable", "p99_ms", True),
    ("skewed: loadTable throughput (req/s)", "skewed", "loadTable", "throughput", False),
    ("skewed: commitTable throughput (commits/s)", "skewed", "commitTable", "throughput", False),
    ("skewed: 409 answers", "skewed", "commitTable", "conflicts_409", True),
    ("list tables page p99 (ms)", "list_pages", "listTablesPage", "p99_ms", True),
    ("multi-table transaction throughput (tx/s)", "transactions", "commitTransaction", "throughput", False),
]


def _get(result: dict[str, Any], server: str, workload: str, op: str, key: str) -> float | None:
    ops = result["servers"].get(server, {}).get("workloads", {}).get(workload, {}).get("ops", {})
    value = ops.get(op, {}).get(key)
    return float(value) if value is not None else None


def _history_rows(result: dict[str, Any], servers: list[str]) -> list[tuple[str, list[float | None]]]:
    rows = []
    for label, suffix in (
        ("loadTable p99, fresh table (ms)", "@0"),
        ("loadTable p99 after N snapshots, all (ms)", " all"),
        ("… with snapshots=refs (ms)", " refs"),
    ):
        values: list[float | None] = []
        for server in servers:
            ops = result["servers"][server].get("workloads", {}).get("long_history", {}).get("ops", {})
            match = [v["p99_ms"] for op, v in ops.items() if op.startswith("loadTable@") and op.endswith(suffix)]
            values.append(float(match[0]) if match else None)
        rows.append((label, values))
    return rows


def markdown(result: dict[str, Any]) -> str:
    servers = list(result["servers"])
    peers = servers[1:]
    head = ["figure", *servers, *(f"ours ÷ {peer}" for peer in peers)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows: list[tuple[str, list[float | None], bool]] = [
        (label, [_get(result, s, w, op, key) for s in servers], lower) for label, w, op, key, lower in HEADLINES
    ]
    rows += [(label, values, True) for label, values in _history_rows(result, servers)]
    list_pass = [
        result["servers"][s]["workloads"].get("list_pages", {}).get("figures", {}).get("pass_ms") for s in servers
    ]
    tables = result.get("params", {}).get("list_tables")
    rows.append((f"list all {tables} tables of a namespace, page by page (ms per pass)", list_pass, True))
    cpu = [result["servers"][s].get("cpu_ms_per_load_table") for s in servers]
    rows.append(("server CPU per loadTable (ms)", cpu, True))
    commit_cpu = [result["servers"][s].get("cpu_ms_per_commit") for s in servers]
    rows.append(("server CPU per commit (ms)", commit_cpu, True))
    rows.append(("server RSS after the run (MB)", [result["servers"][s].get("rss_mb") for s in servers], True))
    for label, values, lower in rows:
        cells = [_fmt(v) for v in values]
        cells += [_ratio(values[0], values[1 + i], lower_is_better=lower) for i in range(len(peers))]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Ratios are ours ÷ peer for rates and peer ÷ ours for latencies, CPU and memory: above 1x we are better."
    )
    gaps = sorted(
        {
            f"{s}: {note}"
            for s in peers
            for w in result["servers"][s].get("workloads", {}).values()
            for note in w["notes"]
        }
    )
    if gaps:
        lines.append("Peer gaps: " + "; ".join(gaps) + ".")
    return "\n".join(lines)


def physics_markdown(result: dict[str, Any]) -> str:
    phys = result.get("physics", {})
    lines = ["| physics ratio | ours | ceiling | ratio |", "|---|---|---|---|"]
    for label, ours_key, ceiling_key in (
        (
            "commits/s ÷ pgbench tps (UPDATE + INSERT, synchronous_commit=on, same clients)",
            "our_commit_rate",
            "pgbench_tps",
        ),
        ("loadTable/s ÷ Litestar hello-world req/s (1 worker, same client load)", "our_load_rate", "hello_world_rate"),
    ):
        ours, ceiling = phys.get(ours_key), phys.get(ceiling_key)
        ratio = f"{ours / ceiling:.1%}" if ours and ceiling else "n/a"
        lines.append(f"| {label} | {_fmt(ours)} | {_fmt(ceiling)} | {ratio} |")
    if "pgbench_binary" in phys:
        lines.append("")
        clients = phys.get("pgbench_clients")
        lines.append(f"pgbench: `{phys['pgbench_binary']}` against the benchmark's own PostgreSQL ({clients} clients).")
    return "\n".join(lines)


def details_markdown(result: dict[str, Any]) -> str:
    """Every workload: per operation and server, rate, p50/p90/p99/p99.9, errors and 409s."""
    out = []
    servers = list(result["servers"])
    workloads: list[str] = []
    for s in servers:
        for w in result["servers"][s].get("workloads", {}):
            if w not in workloads:
                workloads.append(w)
    for w in workloads:
        out.append(f"#### {w}")
        out.append("")
        out.append("| server | op | ok/s | p50 | p90 | p99 | p99.9 | errors | 409 | CPU ms/op |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for s in servers:
            data = result["servers"][s].get("workloads", {}).get(w)
            if not data:
                out.append(f"| {s} | n/a | | | | | | | | |")
                continue
            for op, v in data["ops"].items():
                out.append(
                    f"| {s} | {op} | {_fmt(v['throughput'])} | {_fmt(v['p50_ms'], 2)} | {_fmt(v['p90_ms'], 2)} | "
                    f"{_fmt(v['p99_ms'], 2)} | {_fmt(v['p999_ms'], 2)} | {v['errors']} | {v['conflicts_409']} | "
                    f"{_fmt(data.get('cpu_ms_per_op'), 2)} |"
                )
            for note in data.get("notes", []):
                out.append(f"| {s} | {note} | | | | | | | | |")
        out.append("")
    return "\n".join(out)


def plot(result_samples: dict[str, dict[str, list[Sample]]], out_dir: Path) -> list[Path]:
    """One PNG per workload: latency CDF per server and operation (log scale)."""
    written = []
    for workload, by_server in result_samples.items():
        fig, ax = plt.subplots(figsize=(8, 5))
        for server, samples in by_server.items():
            by_op: dict[str, list[float]] = defaultdict(list)
            for s in samples:
                if s.status in OK:
                    by_op[s.op].append(s.latency * 1000)
            for op, values in sorted(by_op.items()):
                values.sort()
                n = len(values)
                ax.plot(values, [(i + 1) / n for i in range(n)], label=f"{server} {op}")
        ax.set_xscale("log")
        ax.set_xlabel("latency (ms)")
        ax.set_ylabel("fraction of requests")
        ax.set_title(workload)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, loc="lower right")
        path = out_dir / f"{workload}.png"
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return written
