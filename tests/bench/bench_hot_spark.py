"""Hot-table benchmark with Spark (issue 19): W writer threads of one Spark application appending to one table.

Run: `task bench:hot-spark -- [--writers 4] [--seconds 30]` or `python -m tests.bench.bench_hot_spark`. Starts
PostgreSQL (embedded unless `--pg-dsn`), one `catalog-es serve` and one local Spark 3.5 + Iceberg 1.10 session
(the offline jars of `catalog-es spark jars`). For each W: W separate tables, one table without rebase, one with
`catalog-es.server-side-rebase=true`; each writer thread runs `INSERT INTO … VALUES` (10 rows) in a loop for
`--seconds`, with Iceberg's own commit retries off (`commit.retry.num-retries=0`) so a 409 reaches the writer, which
counts it and inserts again. Reports the same columns as `bench_hot_table` (client CPU: the Python driver and its
JVM) and writes `reports/bench/hot-spark-<time>/result.{json,md}`. Not a pytest module.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import threading
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from catalog_es.spark.session import session
from tests.bench import bench_servers as servers
from tests.bench.bench_hot_table import LAYOUTS, Run, markdown, summarize

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BATCH_ROWS = 10
WARM_UP_INSERTS = 20
_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "2",
    "spark.sql.catalog.catalog_es.cache-enabled": "false",
    "spark.scheduler.mode": "FAIR",
}


def _client_cpu() -> float:
    """This driver's CPU and its JVM's (a child process)."""
    me = psutil.Process()
    return servers.cpu_seconds([me, *me.children(recursive=True)])


def _is_conflict(error: Exception) -> bool:
    text = str(error)
    return "CommitFailedException" in text or "CommitStateUnknownException" in text


def _run(spark: SparkSession, server: servers.Server, writers: int, layout: str, rebase: bool, seconds: float) -> Run:
    tag = f"spark_w{writers}_{layout}_{'on' if rebase else 'off'}"
    names = [f"hot.{tag}_{i if layout == 'separate' else 0}" for i in range(writers)]
    properties = f"'commit.retry.num-retries'='0', 'catalog-es.server-side-rebase'='{str(rebase).lower()}'"
    for name in sorted(set(names)):
        spark.sql(f"CREATE TABLE {name} (id BIGINT, payload STRING) USING iceberg TBLPROPERTIES ({properties})")
        spark.sql(f"SELECT count(*) FROM {name}").collect()
    latencies: list[list[float]] = [[] for _ in range(writers)]
    conflicts = [0] * writers
    barrier = threading.Barrier(writers + 1)
    deadline = [0.0]

    def write(i: int) -> None:
        barrier.wait()
        n = 0
        while time.perf_counter() < deadline[0]:
            first = i * 10_000_000 + n * BATCH_ROWS
            values = ", ".join(f"({first + j}, '{'x' * 16}')" for j in range(BATCH_ROWS))
            started = time.perf_counter()
            while True:
                try:
                    spark.sql(f"INSERT INTO {names[i]} VALUES {values}")
                    break
                except Exception as error:  # py4j/pyspark wrap the Java exception
                    if not _is_conflict(error):
                        raise
                    conflicts[i] += 1
            latencies[i].append(time.perf_counter() - started)
            n += 1

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    cpu_before, client_before = server.cpu_seconds(), _client_cpu()
    deadline[0] = time.perf_counter() + seconds
    started = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cpu, client_cpu = server.cpu_seconds() - cpu_before, _client_cpu() - client_before
    return summarize(Run.key("spark", 0, writers, layout, rebase), wall, latencies, conflicts, cpu, client_cpu)


def _warm_up(spark: SparkSession) -> None:
    """JIT and caches first: the first measured run would otherwise pay for the JVM's start."""
    spark.sql("CREATE TABLE hot.warm_up (id BIGINT, payload STRING) USING iceberg")
    for i in range(WARM_UP_INSERTS):
        spark.sql(f"INSERT INTO hot.warm_up VALUES ({i}, 'x')")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", default="4", help="comma-separated writer counts")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--pg-dsn", default=os.environ.get("CATALOG_ES_TEST_PG_DSN"))
    parser.add_argument("--out", default=str(servers.ROOT / "reports" / "bench"))
    args = parser.parse_args()
    stamp = datetime.now(UTC)
    work = Path(args.out) / f"hot-spark-{stamp:%Y%m%dT%H%M%S}"
    work.mkdir(parents=True, exist_ok=True)
    admin = servers.admin_dsn(work, args.pg_dsn)
    server, _ = servers.start_catalog_es(servers.fresh_database(admin, servers.database_name("hotspark")), work, 1)
    runs: list[Run] = []
    spark = session(server.base_url.split("/v1/")[0], "demo", master="local[2]", app_name="hot-bench", conf=_CONF)
    try:
        spark.sparkContext.setLogLevel("OFF")  # a lost commit is expected here, not an error to print
        spark.sql("CREATE NAMESPACE IF NOT EXISTS hot")
        _warm_up(spark)
        for writers in (int(value) for value in args.writers.split(",")):
            for layout, rebase in LAYOUTS:
                runs.append(_run(spark, server, writers, layout, rebase, args.seconds))
                print(json.dumps(asdict(runs[-1])), flush=True)
    finally:
        spark.stop()
        server.stop()
    header = (
        f"hot-table benchmark with Spark, {stamp.isoformat(timespec='seconds')}: {os.cpu_count()} CPUs "
        f"({platform.machine()}), loadavg {os.getloadavg()[0]:.2f} at end; {args.seconds:g} s per run; catalog-es "
        "1 worker; writers are threads of one Spark 3.5 application (local[2]), Iceberg 1.10, its retries off."
    )
    report = markdown(runs, None, header)
    (work / "result.json").write_text(json.dumps({"runs": [asdict(run) for run in runs]}))
    (work / "result.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
