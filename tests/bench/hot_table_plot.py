"""The hot-table benchmark's plot: goodput on one table as a share of W separate tables, by writers W.

`python -m tests.bench.hot_table_plot OUT.png RESULT.json [RESULT.json ...]` draws several runs in one plot.
"""

from __future__ import annotations

import json
import sys
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
    writers = sorted({run.writers for run in runs})
    ax.set_xticks(writers, [str(w) for w in writers])
    ax.set_xlabel("writers W (threads of one pyiceberg process)")
    ax.set_ylabel("hot-table goodput, % of W separate tables")
    ax.set_ylim(0, 120)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def main() -> None:
    from tests.bench.bench_hot_table import Run  # noqa: PLC0415 # the driver imports this module

    out, *results = sys.argv[1:]
    runs = [Run(**run) for result in results for run in json.loads(Path(result).read_text())["runs"]]
    print(plot_goodput(runs, Path(out)))


if __name__ == "__main__":
    main()
