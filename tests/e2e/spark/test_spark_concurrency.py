"""Two Spark applications (two JVMs) committing to one table at once: both succeed, nothing is lost.

Both append in lockstep, so their commits race: the server rebases the loser's append on the new head (issue 19,
on by default), or, where rebase is off, the loser gets 409 and Spark retries on the new base. How many rounds
raced varies with timing (4-5 of 6 in trial runs) and is printed; at least one must have.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.e2e.conftest import RunningCatalog
from tests.e2e.spark.concurrent_writer import meet
from tests.e2e.spark.conftest import SUMMARY

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

COMMITS = 6


def commit_conflicts(catalog: RunningCatalog, namespace: str, table: str) -> int:
    """409 answers to commits on `namespace.table`, from the server's request log."""
    log = catalog.data_dir.parent / f"serve-{catalog.base_url.rsplit(':', 1)[1]}.log"
    conflicts = 0
    for line in log.read_text().splitlines():
        if not line.startswith("{"):
            continue
        entry = json.loads(line)
        if entry.get("method") == "POST" and entry.get("path", "").endswith(f"/namespaces/{namespace}/tables/{table}"):
            conflicts += entry.get("status") == 409
    return conflicts


def rebased_commits(catalog: RunningCatalog, namespace: str) -> int:
    """Commits in `namespace` the server rebased, from the event log (the audit's `rebased` record)."""
    response = httpx.get(f"{catalog.base_url}/management/v1/events", params={"namespace": namespace})
    response.raise_for_status()
    events = response.json()["events"]
    return sum("rebased" in (json.loads(e["data"]) if isinstance(e["data"], str) else e["data"]) for e in events)


def test_two_spark_applications_appending_concurrently_both_succeed_with_every_row(
    spark: SparkSession, spark_catalog: RunningCatalog, spark_jars_dir: Path, namespace: str, tmp_path: Path
) -> None:
    table = f"{namespace}.events"
    spark.sql(f"CREATE TABLE {table} (writer string, seq int) USING iceberg")
    other = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.e2e.spark.concurrent_writer",
            spark_catalog.catalog_uri,
            str(spark_jars_dir),
            table,
            str(COMMITS),
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        started = time.monotonic()
        for seq in range(COMMITS):
            meet(tmp_path, "main", "other", seq, alive=lambda: other.poll() is None)
            if seq == 0:
                started = time.monotonic()
            spark.sql(f"INSERT INTO {table} VALUES ('main', {seq})")
        output, _ = other.communicate(timeout=180)
        SUMMARY[f"{2 * COMMITS} appends in lockstep, 2 JVMs"] = f"{time.monotonic() - started:.2f} s"
    except RuntimeError:
        other.kill()
        pytest.fail(f"the second Spark application stopped:\n{other.communicate()[0].decode()[-3000:]}")
    finally:
        other.kill()
        other.wait()

    assert other.returncode == 0, output.decode()[-3000:]
    written = sorted(tuple(row) for row in spark.sql(f"SELECT writer, seq FROM {table}").collect())
    snapshots = spark.sql(f"SELECT snapshot_id, parent_id, operation FROM {table}.snapshots").collect()
    history = spark.sql(f"SELECT snapshot_id, parent_id FROM {table}.history ORDER BY made_current_at").collect()
    assert written == sorted([("main", seq) for seq in range(COMMITS)] + [("other", seq) for seq in range(COMMITS)])
    assert len(snapshots) == 2 * COMMITS
    assert {row.operation for row in snapshots} == {"append"}
    assert all(later.parent_id == earlier.snapshot_id for earlier, later in itertools.pairwise(history)), (
        "one linear history: every commit was rebased on the one before"
    )
    conflicts, rebased = commit_conflicts(spark_catalog, namespace, "events"), rebased_commits(spark_catalog, namespace)
    SUMMARY["commit conflicts (409) retried by Spark"] = str(conflicts)
    SUMMARY["stale appends rebased by the server"] = str(rebased)
    assert conflicts + rebased > 0, "the lockstep rounds made commits race (4-5 of 6 rounds did in trial runs)"
