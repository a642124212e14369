"""A second Spark application (its own JVM) that appends to a table in lockstep with the test's session.

Usage: python -m tests.e2e.spark.concurrent_writer URI JARS_DIR TABLE COMMITS BARRIER_DIR [STATEMENT]
Before each of its COMMITS appends it meets the test's session at a file barrier, so both commit at about the same
moment and one of them often has to retry on a fresh base. STATEMENT (`{table}` and `{seq}` filled in) replaces
the default append of `('other', seq)`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from catalog_es.spark import session
from tests.e2e.spark.conftest import WAREHOUSE, spark_conf


def meet(barrier: Path, me: str, peer: str, round_number: int, alive: Callable[[], bool] = lambda: True) -> None:
    """Announce `me` at round `round_number` and wait (up to 3 minutes) until `peer` has too."""
    (barrier / f"{me}-{round_number}").touch()
    deadline = time.monotonic() + 180
    while not (barrier / f"{peer}-{round_number}").exists():
        if not alive() or time.monotonic() > deadline:
            raise RuntimeError(f"{peer} never reached round {round_number}")
        time.sleep(0.005)


def main() -> None:
    uri, jars_dir, table, commits, barrier = sys.argv[1:6]
    statement = sys.argv[6] if len(sys.argv) > 6 else "INSERT INTO {table} VALUES ('other', {seq})"
    spark = session(uri, WAREHOUSE, master="local[1]", jars_dir=Path(jars_dir), conf=spark_conf())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        spark.sql(f"SELECT count(*) FROM {table}").collect()  # load the catalog and the table before the race
        for seq in range(int(commits)):
            meet(Path(barrier), "other", "main", seq)
            spark.sql(statement.format(table=table, seq=seq))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
