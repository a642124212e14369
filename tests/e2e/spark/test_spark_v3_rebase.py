"""Two Spark applications committing to one format-version 3 table at once, rebased by the server (issue 19).

Spark (Iceberg 1.10) is the one v3 writer here. Without the rebase, a lost race is a 409 and Spark redoes the
commit on the new base; with it, the server rebases the commit itself and must give the rows the row ids
(spec "Row Lineage") that Spark's own retry would have: the table's next free ones.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import ManifestContent

from catalog_es.metadata.manifest_row_ids import first_row_id
from catalog_es.storage.manifest_lists import read_manifest_list
from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.spark.concurrent_writer import meet
from tests.e2e.spark.conftest import SUMMARY
from tests.e2e.spark.test_spark_concurrency import commit_conflicts
from tests.e2e.spark.test_spark_v3 import served

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

COMMITS = 6
APPEND_BATCHES = 3
DELETE_BATCHES = 3
IO = PyArrowFileIO()


def rebased_commits(catalog: RunningCatalog, namespace: str, table: str) -> list[dict[str, Any]]:
    """The commit events of the table that the server rebased (their `rebased` record and applied updates)."""
    response = httpx.get(
        f"{catalog.base_url}/management/v1/events",
        params={"namespace": namespace, "table": table, "pageSize": 1000},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    data = [json.loads(e["data"]) if isinstance(e["data"], str) else e["data"] for e in response.json()["events"]]
    return [event for event in data if event.get("rebased")]


def operations(commits: list[dict[str, Any]]) -> list[str]:
    return [
        update["snapshot"]["summary"]["operation"]
        for commit in commits
        for update in commit["updates"]
        if update["action"] == "add-snapshot"
    ]


def in_lockstep(
    spark: SparkSession,
    catalog: RunningCatalog,
    jars_dir: Path,
    barrier: Path,
    table: str,
    mine: str,
    others: str,
) -> None:
    """Run `mine` here and `others` in a second Spark application, COMMITS rounds, both released together."""
    other = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.e2e.spark.concurrent_writer",
            catalog.catalog_uri,
            str(jars_dir),
            table,
            str(COMMITS),
            str(barrier),
            others,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        for seq in range(COMMITS):
            meet(barrier, "main", "other", seq, alive=lambda: other.poll() is None)
            spark.sql(mine.format(table=table, seq=seq))
        output, _ = other.communicate(timeout=180)
    except RuntimeError:
        other.kill()
        pytest.fail(f"the second Spark application stopped:\n{other.communicate()[0].decode()[-3000:]}")
    finally:
        other.kill()
        other.wait()
    assert other.returncode == 0, output.decode()[-3000:]


def lockstep_batches(
    spark: SparkSession,
    catalog: RunningCatalog,
    jars_dir: Path,
    tmp_path: Path,
    table: str,
    statements: tuple[str, str],
    *,
    most: int,
    raced: Callable[[], bool],
) -> int:
    """Batches of COMMITS lockstep rounds (`statements`: this application's and the other's, `{first}` the batch's
    first `seq`) until `raced()` or `most` batches ran; returns how many ran."""
    batches = 0
    while batches < most:
        barrier = tmp_path / f"batch-{batches}"
        barrier.mkdir()
        mine, others = (statement.replace("{first}", str(batches * COMMITS)) for statement in statements)
        in_lockstep(spark, catalog, jars_dir, barrier, table, mine, others=others)
        batches += 1
        if raced():
            break
    return batches


def row_id_ranges(metadata: dict[str, Any]) -> list[tuple[int, int, int]]:
    """(first row id, end, sequence number) of every snapshot, oldest first; asserts they are disjoint and that
    `next-row-id` is past the last."""
    snapshots = sorted(metadata["snapshots"], key=lambda snapshot: snapshot["sequence-number"])
    ranges = [(s["first-row-id"], s["first-row-id"] + s["added-rows"], s["sequence-number"]) for s in snapshots]
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(ranges)), ranges  # disjoint, in order
    assert metadata["next-row-id"] == max(end for _, end, _ in ranges)
    return ranges


def added_by(ranges: list[tuple[int, int, int]], row_id: int) -> int:
    """The sequence number of the snapshot whose row-id range holds `row_id` (exactly one)."""
    (sequence_number,) = [number for start, end, number in ranges if start <= row_id < end]
    return sequence_number


def test_concurrent_spark_appends_to_a_v3_table_are_rebased_with_disjoint_row_ids(
    spark: SparkSession,
    spark_catalog: RunningCatalog,
    spark_rest: RestApi,
    spark_jars_dir: Path,
    namespace: str,
    tmp_path: Path,
) -> None:
    table = f"{namespace}.events"
    spark.sql(
        f"CREATE TABLE {table} (writer string, seq int) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'catalog-es.server-side-rebase'='true')"
    )
    # A first append into an empty table that races another keeps its 409 (it may be an overwrite whose delete
    # matched nothing: commands/README.md "Hot tables"), so the table starts with a row.
    spark.sql(f"INSERT INTO {table} VALUES ('seed', -1)")

    # Lockstep rounds race 4-5 times in 6 alone, none in one full-suite run on a loaded machine: up to
    # APPEND_BATCHES batches of rounds until the server rebased an append.
    def appends_raced() -> bool:
        return bool(rebased_commits(spark_catalog, namespace, "events"))

    batches = lockstep_batches(
        spark,
        spark_catalog,
        spark_jars_dir,
        tmp_path,
        table,
        (
            "INSERT INTO {table} VALUES ('main', {first} + {seq})",
            "INSERT INTO {table} VALUES ('other', {first} + {seq})",
        ),
        most=APPEND_BATCHES,
        raced=appends_raced,
    )
    rebased = [commit["rebased"] for commit in rebased_commits(spark_catalog, namespace, "events")]
    rounds = batches * COMMITS

    # Every append landed at its first attempt: races were rebased by the server, none answered 409.
    conflicts = commit_conflicts(spark_catalog, namespace, "events")
    SUMMARY["v3 lockstep appends: commits rebased by the server / 409s"] = f"{len(rebased)} / {conflicts}"
    assert conflicts == 0
    assert rebased, f"no two appends raced in {rounds} lockstep rounds"
    assert all(entry["original_base_snapshot_id"] != entry["new_parent_snapshot_id"] for entry in rebased)

    written = spark.sql(f"SELECT writer, seq, _row_id, _last_updated_sequence_number FROM {table}").collect()
    assert sorted((row.writer, row.seq) for row in written) == sorted(
        [("seed", -1)] + [("main", seq) for seq in range(rounds)] + [("other", seq) for seq in range(rounds)]
    )
    history = spark.sql(f"SELECT snapshot_id, parent_id FROM {table}.history ORDER BY made_current_at").collect()
    assert len(history) == 2 * rounds + 1
    assert all(later.parent_id == earlier.snapshot_id for earlier, later in itertools.pairwise(history))

    ranges = row_id_ranges(served(spark_rest, namespace, "events"))
    assert all(start + 1 == end for start, end, _ in ranges), ranges  # one row per append

    row_ids = sorted(row._row_id for row in written)
    assert row_ids == list(range(2 * rounds + 1)), "unique row ids, the table's next free ones at each commit"
    for row in written:  # each row's id is in the range of the snapshot that added it, stamped with its number
        assert row._last_updated_sequence_number == added_by(ranges, row._row_id), (row, ranges)


@pytest.mark.timeout(900)  # two Spark applications in turn: minutes on two shared cores
def test_spark_deletion_vectors_in_disjoint_partitions_are_rebased_and_rows_keep_their_ids(
    spark: SparkSession,
    spark_catalog: RunningCatalog,
    spark_rest: RestApi,
    spark_jars_dir: Path,
    namespace: str,
    tmp_path: Path,
) -> None:
    """Each application deletes one row per round from its own partition (v3: a deletion vector); their commits
    race as the appends' do (an append beside a delete rarely does: their durations differ too much)."""
    table = f"{namespace}.parts"
    spark.sql(
        f"CREATE TABLE {table} (writer string, part int, seq int) USING iceberg PARTITIONED BY (part) "
        "TBLPROPERTIES ('format-version'='3', 'catalog-es.server-side-rebase'='true', "
        "'write.delete.mode'='merge-on-read')"
    )
    seed = ", ".join(f"('seed', {part}, {seq})" for part in (0, 1) for seq in range((DELETE_BATCHES + 1) * COMMITS))
    spark.sql(f"INSERT INTO {table} VALUES {seed}")
    seeded = {
        (row.part, row.seq): row._row_id for row in spark.sql(f"SELECT part, seq, _row_id FROM {table}").collect()
    }

    # Deletes race less often than appends (2-5 of 6 rounds alone, none in 18 within a full CI run): up to
    # DELETE_BATCHES batches of lockstep rounds, each on rows of its own, until the server rebased a delete;
    # without any race the test checks the rest and reports itself skipped.
    def delete_raced() -> bool:
        return "delete" in operations(rebased_commits(spark_catalog, namespace, "parts"))

    batches = lockstep_batches(
        spark,
        spark_catalog,
        spark_jars_dir,
        tmp_path,
        table,
        (
            "DELETE FROM {table} WHERE part = 0 AND seq = {first} + {seq}",
            "DELETE FROM {table} WHERE part = 1 AND seq = {first} + {seq}",
        ),
        most=DELETE_BATCHES,
        raced=delete_raced,
    )
    rebased = operations(rebased_commits(spark_catalog, namespace, "parts"))

    conflicts = commit_conflicts(spark_catalog, namespace, "parts")
    SUMMARY["v3 deletes in two partitions: operations rebased / 409s"] = f"{sorted(rebased)} / {conflicts}"
    assert conflicts == 0  # a race the server did not rebase would be a 409 (retried by Spark, counted here)

    written = spark.sql(f"SELECT part, seq, _row_id, _last_updated_sequence_number FROM {table}").collect()
    kept = {(part, seq): row_id for (part, seq), row_id in seeded.items() if seq >= batches * COMMITS}
    assert {(row.part, row.seq): row._row_id for row in written} == kept, "rows keep their ids through the deletes"
    assert spark.sql(f"SELECT DISTINCT file_format FROM {table}.delete_files").collect()[0].file_format == "PUFFIN"

    metadata = served(spark_rest, namespace, "parts")
    ranges = row_id_ranges(metadata)
    assert len({row._row_id for row in written}) == len(written)
    for row in written:
        assert row._last_updated_sequence_number == added_by(ranges, row._row_id), (row, ranges)
    for snapshot in metadata["snapshots"]:  # as written by the server or by Spark: row ids on data manifests only
        manifests = read_manifest_list(IO.new_input(snapshot["manifest-list"]), format_version=3)
        assert all((first_row_id(m) is None) == (m.content == ManifestContent.DELETES) for m in manifests), snapshot
    head = next(s for s in metadata["snapshots"] if s["snapshot-id"] == metadata["current-snapshot-id"])
    head_manifests = read_manifest_list(IO.new_input(head["manifest-list"]), format_version=3)
    assert any(m.content == ManifestContent.DELETES for m in head_manifests)
    if "delete" not in rebased:  # seen in full-suite CI runs: the two JVMs' deletes never overlapped
        pytest.skip(f"no two deletes raced in {batches * COMMITS} lockstep rounds: no rebased delete to check")
