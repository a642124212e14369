"""`catalog-es maintenance run` end to end: jobs on queue `maintenance` carried out by the worker's own Spark,
checked with pyiceberg, the suite's Spark session and DuckDB, and recorded as events by `system:maintenance`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.table import Table

from api.container import open_services
from api.settings import load_settings
from catalog_es.maintenance.jobs import MAINTENANCE_QUEUE, InheritedFrom, MaintenanceJob, encode_job
from catalog_es.maintenance.policy_types import decode_policy, encode_policy
from catalog_es.store.eventstore import EventMetadata
from commands.tasks import NewTask, schedule_task
from tests.e2e.conftest import CLI, RunningCatalog
from tests.e2e.spark.conftest import SUMMARY, WAREHOUSE

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

NAMESPACE = "maintenance"
APPENDS = 200
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("label", pa.string())])
STARTED = "io.catalog-es.maintenance-job.started.v1"
FINISHED = "io.catalog-es.maintenance-job.finished.v1"


def _dsn(running: RunningCatalog) -> str:
    return running.env["CATALOG_ES__PG_DSN"]


def _worker_env(running: RunningCatalog, lease_seconds: float = 60) -> dict[str, str]:
    return {
        **running.env,
        "CATALOG_ES__MAINTENANCE__SPARK_MASTER": "local[2]",
        "CATALOG_ES__MAINTENANCE__CATALOG_URI": running.catalog_uri,
        "CATALOG_ES__MAINTENANCE__LEASE_SECONDS": str(lease_seconds),
        "CATALOG_ES__MAINTENANCE__ORPHAN_MIN_AGE_SECONDS": "60",
        "CATALOG_ES__LOG_JSON": "false",
    }


def _worker(running: RunningCatalog, log: Path, lease_seconds: float = 60) -> subprocess.Popen[bytes]:
    """`catalog-es maintenance run --once` in its own process group (the JVM it starts included)."""
    with log.open("ab") as sink:
        return subprocess.Popen(
            [*CLI, "maintenance", "run", "--once", "--data-dir", str(running.data_dir)],
            env=_worker_env(running, lease_seconds),
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _run_once(running: RunningCatalog, log: Path) -> float:
    started = time.monotonic()
    worker = _worker(running, log)
    assert worker.wait(timeout=900) == 0, log.read_text()[-4000:]
    return time.monotonic() - started


def _schedule(running: RunningCatalog, table: Table, policy_type: str, policy: dict[str, Any]) -> uuid.UUID:
    """Put a job on queue `maintenance` as the scheduler step would (the effective policy, every field)."""
    table_id = _table_id(table)
    with psycopg.connect(_dsn(running)) as conn:
        row = conn.execute("SELECT warehouse_id FROM tables WHERE id = %s", (table_id,)).fetchone()
    assert row is not None
    content = encode_policy(decode_policy(policy_type, {"enable": True, **policy}))
    job = MaintenanceJob(
        policy_type=policy_type,  # type: ignore[arg-type]
        policy=content,
        inherited_from=InheritedFrom(type="table", id=table_id),
        trigger={"kind": "test"},
    )

    async def schedule() -> uuid.UUID:
        async with open_services(load_settings(running.env), _dsn(running), pool_size=(1, 1)) as services:
            ctx = services.ctx
            async with ctx.store.transaction(EventMetadata(actor="test")) as tx:
                new = NewTask(
                    queue=MAINTENANCE_QUEUE,
                    warehouse_id=row[0],
                    entity_type="table",
                    entity_id=table_id,
                    payload=encode_job(job),
                    max_attempts=3,
                )
                return await schedule_task(tx, ctx, new)

    return asyncio.run(schedule())


def _table_id(table: Table) -> uuid.UUID:
    return uuid.UUID(str(table.metadata.table_uuid))


def _job_events(running: RunningCatalog, table: Table) -> list[tuple[str, str, dict[str, Any]]]:
    with psycopg.connect(_dsn(running)) as conn:
        rows = conn.execute(
            "SELECT type, extensions->>'actor', data FROM catalog_events"
            " WHERE type IN (%s, %s) AND data->>'table_id' = %s ORDER BY global_position",
            (STARTED, FINISHED, str(_table_id(table))),
        ).fetchall()
    return [(str(kind), str(actor), dict(data)) for kind, actor, data in rows]


def _task_events(running: RunningCatalog, task_id: uuid.UUID) -> list[tuple[str, dict[str, Any]]]:
    with psycopg.connect(_dsn(running)) as conn:
        rows = conn.execute(
            "SELECT type, data FROM catalog_events WHERE stream_id LIKE %s ORDER BY global_position",
            (f"%{task_id}",),
        ).fetchall()
    return [(str(kind).split(".")[-2], dict(data)) for kind, data in rows]


def _finished(running: RunningCatalog, table: Table) -> dict[str, Any]:
    """The metrics of the table's last job, which must have succeeded; start and end by `system:maintenance`."""
    events = _job_events(running, table)
    assert [kind for kind, _, _ in events][-2:] == [STARTED, FINISHED], events
    assert {actor for _, actor, _ in events} == {"system:maintenance"}
    finished = events[-1][2]
    assert finished["outcome"] == "succeeded", finished
    metrics: dict[str, Any] = {**finished["metrics"], "job_id": finished["job_id"]}
    return metrics


def _set_policy(running: RunningCatalog, table: Table, policy_type: str, content: dict[str, Any]) -> None:
    """`PUT …/table/{id}/policy/{type}`: the triggers then decide when the job is due."""
    with psycopg.connect(_dsn(running)) as conn:
        row = conn.execute("SELECT warehouse_id FROM tables WHERE id = %s", (_table_id(table),)).fetchone()
    assert row is not None
    path = f"/management/v1/warehouse/{row[0]}/table/{_table_id(table)}/policy/{policy_type}"
    response = httpx.put(f"{running.base_url}{path}", json={"enable": True, **content}, timeout=30)
    assert response.status_code == 200, response.text


def _rows(table: Table) -> list[tuple[int, str]]:
    return sorted(zip(*table.refresh().scan().to_arrow().to_pydict().values(), strict=True))


def _data_files(table: Table) -> int:
    return len(list(table.refresh().scan().plan_files()))


def _local(location: str) -> Path:
    return Path(location.removeprefix("file://").removeprefix("file:"))


@pytest.fixture(scope="module")
def iceberg(spark_catalog: RunningCatalog) -> Catalog:
    catalog = load_catalog("maintenance", type="rest", uri=spark_catalog.catalog_uri, warehouse=WAREHOUSE)
    catalog.create_namespace_if_not_exists(NAMESPACE)
    return catalog


def _table(iceberg: Catalog, name: str, appends: int) -> Table:
    table = iceberg.create_table(f"{NAMESPACE}.{name}", schema=SCHEMA)
    for i in range(appends):
        table.append(pa.table({"id": [i], "label": [f"row {i}"]}, schema=SCHEMA))
    return table


def _duckdb_count(running: RunningCatalog, name: str) -> int:
    duckdb = pytest.importorskip("duckdb")
    connection = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for extension in ("httpfs", "avro", "iceberg"):
        module = pytest.importorskip(f"duckdb_extension_{extension}")
        [binary] = Path(str(module.__file__)).parent.glob(f"extensions/*/{extension}.duckdb_extension")
        connection.execute(f"LOAD '{binary}'")
    connection.execute(
        f"ATTACH '{WAREHOUSE}' AS lake (TYPE iceberg, ENDPOINT '{running.catalog_uri}', AUTHORIZATION_TYPE 'none')"
    )
    row = connection.execute(f"SELECT count(*), count(DISTINCT id) FROM lake.{NAMESPACE}.{name}").fetchone()
    connection.close()
    assert row is not None
    assert row[0] == row[1]
    return int(row[0])


@pytest.mark.timeout(1200)  # 200 commits and a Spark start: minutes on two shared cores
def test_one_run_compacts_expires_and_removes_old_orphans_when_jobs_are_due(
    spark_catalog: RunningCatalog, iceberg: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    started = time.monotonic()
    small = _table(iceberg, "small_files", APPENDS)
    SUMMARY[f"maintenance: {APPENDS} pyiceberg appends"] = f"{time.monotonic() - started:.1f} s"
    history = _table(iceberg, "history", 8)
    orphans = _table(iceberg, "orphans", 1)
    rows_before, files_before = _rows(small), _data_files(small)
    expired_lists = [_local(snapshot.manifest_list) for snapshot in history.snapshots()[:-3]]
    data_dir = _local(orphans.location()) / "data"
    old_orphan, fresh_orphan = data_dir / "old-orphan.parquet", data_dir / "fresh-orphan.parquet"
    old_orphan.write_bytes(b"left by a writer that crashed two hours ago")
    fresh_orphan.write_bytes(b"written by a commit still in flight")
    two_hours_ago = time.time() - 7200
    os.utime(old_orphan, (two_hours_ago, two_hours_ago))

    _set_policy(spark_catalog, small, "system.data-compaction", {"min-input-files": 2})
    _set_policy(
        spark_catalog, history, "system.snapshot-expiry", {"max-snapshot-age-seconds": 1, "min-snapshots-to-keep": 3}
    )
    _set_policy(
        spark_catalog, orphans, "system.orphan-file-removal", {"older-than-seconds": 3600, "schedule-seconds": 1}
    )
    seconds = _run_once(spark_catalog, tmp_path / "worker.log")
    SUMMARY["maintenance: worker run (3 jobs, incl. Spark start)"] = f"{seconds:.1f} s"

    compacted = _finished(spark_catalog, small)
    assert compacted["rewritten-data-files-count"] == files_before == APPENDS
    assert compacted["data-files-before"] == APPENDS
    assert _data_files(small) == compacted["data-files-after"] == 1
    assert _rows(small) == rows_before
    assert spark.sql(f"SELECT count(DISTINCT id) AS n FROM {NAMESPACE}.small_files").collect()[0]["n"] == APPENDS
    assert _duckdb_count(spark_catalog, "small_files") == APPENDS
    SUMMARY["maintenance: compaction"] = f"{files_before} -> 1 data files, {compacted['seconds']} s"

    expired = _finished(spark_catalog, history)
    assert (expired["snapshots-before"], expired["snapshots-after"]) == (8, 3)
    assert len(history.refresh().snapshots()) == 3
    assert expired["deleted-manifest-lists-count"] == 5
    assert not any(path.exists() for path in expired_lists), "the expired snapshots' manifest lists stay on disk"
    assert _rows(history) == [(i, f"row {i}") for i in range(8)]
    SUMMARY["maintenance: snapshot expiry"] = f"8 -> 3 snapshots, {expired['seconds']} s"

    removed = _finished(spark_catalog, orphans)
    assert not old_orphan.exists()
    assert fresh_orphan.exists(), "a file younger than the threshold was deleted"
    assert [Path(location).name for location in removed["orphan-file-locations"]] == ["old-orphan.parquet"]
    assert _rows(orphans) == [(0, "row 0")]
    SUMMARY["maintenance: orphan removal"] = f"1 removed, 1 kept, {removed['seconds']} s"

    _set_policy(spark_catalog, orphans, "system.orphan-file-removal", {"enable": False})  # due every second else
    task_id = uuid.UUID(compacted["job_id"])
    assert [kind for kind, _ in _task_events(spark_catalog, task_id)] == ["scheduled", "started", "succeeded"]


def _wait_for_start(running: RunningCatalog, table: Table, worker: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 600
    while not _job_events(running, table):
        assert worker.poll() is None, log.read_text()[-4000:]
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.2)


@pytest.mark.timeout(900)  # two worker runs, each starting Spark
def test_a_killed_worker_leaves_the_table_readable_and_its_job_runs_again(
    spark_catalog: RunningCatalog, iceberg: Catalog, spark: SparkSession, tmp_path: Path
) -> None:
    table = _table(iceberg, "killed", 30)
    rows_before = _rows(table)
    lease = 10.0
    task_id = _schedule(spark_catalog, table, "system.data-compaction", {"min-input-files": 2})
    log = tmp_path / "killed.log"
    worker = _worker(spark_catalog, log, lease_seconds=lease)
    _wait_for_start(spark_catalog, table, worker, log)
    os.killpg(worker.pid, signal.SIGKILL)  # the worker and its Spark JVM, mid-job
    worker.wait(timeout=30)
    killed_at = time.monotonic()

    assert _rows(table) == rows_before
    assert spark.sql(f"SELECT count(*) AS n FROM {NAMESPACE}.killed").collect()[0]["n"] == 30

    time.sleep(max(0.0, lease - (time.monotonic() - killed_at)) + 1)  # the dead worker's lease runs out
    _run_once(spark_catalog, tmp_path / "retry.log")

    steps = [(kind, data.get("attempt")) for kind, data in _task_events(spark_catalog, task_id)]
    assert steps[0][0] == "scheduled"
    assert ("failed", 1) in steps, steps  # the lost attempt, counted when the lease ran out
    assert steps[-2:] == [("started", 2), ("succeeded", 2)], steps
    retried = _finished(spark_catalog, table)
    assert retried["data-files-after"] == _data_files(table) == 1
    assert _rows(table) == rows_before
