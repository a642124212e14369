"""The hot-table benchmark's plot: goodput on one table as a share of W separate tables, by writers W."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt  # after choosing the headless backend

if TYPE_CHECKING:
    from tests.bench.bench_hot_table import Run


def plot_goodput(runs: list[Run], path: Path) -> Path:
    """One line per client, history and rebase setting: hot-table appends/s ÷ separate tables' appends/s."""
    from tests.bench.bench_hot_table import ceiling_ratio  # noqa: PLC0415 # the driver imports this module

    lines: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for run in runs:
        if run.layout == "hot":
            label = f"{run.client} client, history {run.history}, rebase {'on' if run.rebase else 'off'}"
            lines[label].append((run.writers, 100 * ceiling_ratio(run, runs)))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in sorted(lines.items()):
        points.sort()
        ax.plot(
            [w for w, _ in points],
            [r for _, r in points],
            marker="o",
            linestyle="--" if "off" in label else "-",
            label=label,
        )
    ax.axhline(70, color="grey", linewidth=0.8, linestyle=":", label="issue 19 target (70 %)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("writers W (threads of one pyiceberg process)")
    ax.set_ylabel("hot-table goodput, % of W separate tables")
    ax.set_ylim(0, 120)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path
