"""Purges through the task queue end to end: a served catalog, pyiceberg, file and S3 (moto) warehouses, and
`catalog-es worker` processes, one of them killed mid-purge."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField

from catalog_es.locations import local_path
from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.conftest import (
    TEST_ALLOWED_HOSTS,
    ForkedProcess,
    RunningCatalog,
    eventually,
    spawn_server,
    start_catalog,
    stop_catalog,
)
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket, object_keys

SUCCEEDED = "io.catalog-es.task.succeeded.v1"
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "part", LongType(), required=False))


@contextmanager
def _server(dsn: str, data_dir: Path, **settings: str) -> Iterator[RunningCatalog]:
    env = {**os.environ, "CATALOG_ES__PG_DSN": dsn, "CATALOG_ES__SECRETS_KEY": generate_secrets_key(), **settings}
    running = start_catalog(data_dir, env)
    try:
        yield running
    finally:
        stop_catalog(running)


@pytest.fixture(scope="module")
def served(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningCatalog, str]]:
    """`serve` with its in-process worker (polling often, so a purge follows its drop quickly)."""
    data_dir = tmp_path_factory.mktemp("served") / "data"
    with (
        new_database(pg_admin_dsn) as dsn,
        _server(dsn, data_dir, CATALOG_ES__TASK_WORKER__POLL_SECONDS="0.2") as running,
    ):
        yield running, dsn


def _succeeded(dsn: str) -> list[dict[str, Any]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT data FROM catalog_events WHERE type = %s ORDER BY global_position", (SUCCEEDED,)
        ).fetchall()
    return [row[0] for row in rows]


def _files(directory: Path) -> list[Path]:
    return [path for path in directory.rglob("*") if path.is_file()] if directory.exists() else []


def test_purge_deletes_files_of_file_warehouse_when_worker_ran(served: tuple[RunningCatalog, str]) -> None:
    running, dsn = served
    ice = load_catalog("served", type="rest", uri=running.catalog_uri, warehouse="demo")
    ice.create_namespace("files")
    table = ice.create_table("files.sales", schema=SCHEMA)
    table.append(pa.table({"id": [1, 2], "part": [1, 2]}))
    table_dir = Path(local_path(table.location()))
    assert any(table_dir.rglob("*.parquet"))
    before = len(_succeeded(dsn))

    ice.purge_table("files.sales")

    assert eventually(lambda: not table_dir.exists()), _files(table_dir)
    [result] = eventually(lambda: _succeeded(dsn)[before:])  # the directory goes before the task records its result
    assert result["result"]["files"] >= 4  # data, manifest, manifest list, metadata files
    assert result["result"]["deleted"] == result["result"]["files"]


def test_purge_deletes_hadoop_checksum_sidecars_with_their_files_when_spark_wrote_them(
    served: tuple[RunningCatalog, str],
) -> None:
    """Spark on a file warehouse leaves `.name.crc` beside each file; they kept the table's directories alive."""
    running, dsn = served
    ice = load_catalog("served", type="rest", uri=running.catalog_uri, warehouse="demo")
    ice.create_namespace("spark_files")
    table = ice.create_table("spark_files.sales", schema=SCHEMA)
    table.append(pa.table({"id": [1, 2], "part": [1, 2]}))
    table_dir = Path(local_path(table.location()))
    for written in [path for path in _files(table_dir) if path.suffix in (".parquet", ".avro")]:
        written.with_name(f".{written.name}.crc").write_bytes(b"crc")
    before = len(_succeeded(dsn))

    ice.purge_table("spark_files.sales")

    assert eventually(lambda: not table_dir.exists()), _files(table_dir)
    [result] = eventually(lambda: _succeeded(dsn)[before:])  # the directory goes before the task records its result
    assert result["result"]["deleted"] == result["result"]["files"]


def test_purge_keeps_a_checksum_file_whose_file_the_table_does_not_reference(
    served: tuple[RunningCatalog, str],
) -> None:
    running, dsn = served
    ice = load_catalog("served", type="rest", uri=running.catalog_uri, warehouse="demo")
    ice.create_namespace("spark_other")
    table = ice.create_table("spark_other.sales", schema=SCHEMA)
    table.append(pa.table({"id": [1], "part": [1]}))
    table_dir = Path(local_path(table.location()))
    stranger = table_dir / "data" / ".not-the-tables.parquet.crc"
    stranger.write_bytes(b"crc")
    before = len(_succeeded(dsn))

    ice.purge_table("spark_other.sales")

    assert eventually(lambda: len(_succeeded(dsn)) > before)
    assert _files(table_dir) == [stranger]


def test_purge_deletes_objects_of_s3_warehouse_when_worker_ran(
    served: tuple[RunningCatalog, str], s3_endpoint: str
) -> None:
    running, dsn = served
    bucket = make_bucket(s3_endpoint)
    profile = {
        "type": "s3",
        "bucket": bucket,
        "key-prefix": "lake",
        "region": REGION,
        "endpoint": s3_endpoint,
        "path-style-access": True,
        "flavor": "s3-compat",
    }
    credential = {
        "type": "s3",
        "credential-type": "access-key",
        "access-key-id": ACCESS_KEY_ID,
        "secret-access-key": SECRET_ACCESS_KEY,
    }
    body = {"warehouse-name": "lake", "storage-profile": profile, "storage-credential": credential}
    created = httpx.post(f"{running.base_url}/management/v1/warehouse", json=body, timeout=60)
    assert created.status_code == 201, created.text
    keys = {"s3.access-key-id": ACCESS_KEY_ID, "s3.secret-access-key": SECRET_ACCESS_KEY}
    ice = load_catalog("lake", type="rest", uri=running.catalog_uri, warehouse="lake", **keys)
    ice.create_namespace("sales")
    kept = ice.create_table("sales.kept", schema=SCHEMA)
    kept.append(pa.table({"id": [1], "part": [1]}))
    purged = ice.create_table("sales.purged", schema=SCHEMA)
    purged.append(pa.table({"id": [1, 2], "part": [1, 2]}))
    purged_prefix = purged.location().removeprefix(f"s3://{bucket}/") + "/"
    kept_keys = object_keys(s3_endpoint, bucket, kept.location().removeprefix(f"s3://{bucket}/") + "/")
    before = len(_succeeded(dsn))
    assert object_keys(s3_endpoint, bucket, purged_prefix)

    ice.purge_table("sales.purged")

    assert eventually(lambda: not object_keys(s3_endpoint, bucket, purged_prefix))
    assert eventually(lambda: len(_succeeded(dsn)) > before)
    assert object_keys(s3_endpoint, bucket, kept.location().removeprefix(f"s3://{bucket}/") + "/") == kept_keys


def _worker(
    dsn: str, data_dir: Path, log: Path, *args: str, **settings: str
) -> subprocess.Popen[bytes] | ForkedProcess:
    env = {**os.environ, **TEST_ALLOWED_HOSTS, "CATALOG_ES__PG_DSN": dsn, **settings}
    env["CATALOG_ES__FILE_STORAGE_ROOTS"] = str(data_dir.parent)
    return spawn_server(["worker", *args], env, log)


def _progress(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT max((progress->>'done')::int) FROM task_leases").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _task_events(dsn: str) -> list[tuple[str, dict[str, Any]]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT type, data FROM catalog_events WHERE type LIKE 'io.catalog-es.task.%' ORDER BY global_position"
        ).fetchall()
    return [(str(kind).split(".")[3], data) for kind, data in rows]


def test_purge_resumes_without_redoing_work_when_worker_was_killed_mid_purge(pg_admin_dsn: str, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with new_database(pg_admin_dsn) as dsn:
        with _server(dsn, data_dir, CATALOG_ES__TASK_WORKER__ENABLED="false") as running:
            ice = load_catalog("kill", type="rest", uri=running.catalog_uri, warehouse="demo")
            assert isinstance(ice, RestCatalog)
            ice.create_namespace("big")
            spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "part"))
            table = ice.create_table("big.many", schema=SCHEMA, partition_spec=spec)
            table.append(pa.table({"id": list(range(300)), "part": list(range(300))}))  # 300 data files
            table_dir = Path(local_path(table.location()))
            ice.purge_table("big.many")
        files_before = len(_files(table_dir))
        assert files_before > 300  # nothing deleted without a worker

        settings = {
            "CATALOG_ES__TASK_WORKER__PURGE_BATCH_SIZE": "1",
            "CATALOG_ES__TASK_WORKER__PURGE_CONCURRENCY": "1",
            "CATALOG_ES__TASK_WORKER__LEASE_SECONDS": "3",
            "CATALOG_ES__TASK_WORKER__POLL_SECONDS": "0.1",
        }
        first = _worker(dsn, data_dir, tmp_path / "worker-1.log", **settings)
        try:
            assert eventually(lambda: _progress(dsn) >= 20, timeout=60), (tmp_path / "worker-1.log").read_text()
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        done_at_kill = _progress(dsn)
        left = len(_files(table_dir))
        assert 0 < left < files_before  # killed part way

        time.sleep(3.2)  # the killed worker's lease runs out
        second = _worker(dsn, data_dir, tmp_path / "worker-2.log", "--once", **settings)
        assert second.wait(timeout=120) == 0, (tmp_path / "worker-2.log").read_text()

        assert not table_dir.exists()
        events = _task_events(dsn)
        assert [kind for kind, _ in events] == ["scheduled", "started", "failed", "started", "succeeded"]
        result = events[-1][1]["result"]
        assert result["resumed-at"] >= done_at_kill  # where the killed worker's progress said it was
        # Nothing deleted twice but at most the one file in flight when the first worker died.
        assert result["files"] - result["resumed-at"] - 1 <= result["deleted"] <= result["files"] - result["resumed-at"]
        assert result["files"] == files_before  # every file of the table was in the plan


def test_task_routes_list_inspect_page_and_cancel_when_no_worker_runs(pg_admin_dsn: str, tmp_path: Path) -> None:
    with (
        new_database(pg_admin_dsn) as dsn,
        _server(dsn, tmp_path / "data", CATALOG_ES__TASK_WORKER__ENABLED="false") as running,
        httpx.Client(base_url=f"{running.base_url}/management/v1", timeout=30) as api,
    ):
        ice = load_catalog("routes", type="rest", uri=running.catalog_uri, warehouse="demo")
        ice.create_namespace("ns")
        tables = {name: ice.create_table(f"ns.{name}", schema=SCHEMA) for name in ("a", "b")}
        for name in tables:
            ice.purge_table(f"ns.{name}")
        warehouse_id = httpx.get(f"{running.base_url}/management/v1/warehouse", timeout=30).json()["warehouses"][0][
            "id"
        ]
        base = f"/warehouse/{warehouse_id}"

        first = api.post(f"{base}/task/list", json={"page-size": 1})
        second = api.post(f"{base}/task/list", json={"page-size": 1, "page-token": first.json()["next-page-token"]})
        everything = api.post(f"{base}/task/list", json={"queue-name": ["tabular_purge"], "status": ["SCHEDULED"]})
        done = api.post(f"{base}/task/list", json={"status": ["SUCCESS"]})
        by_entity = api.post(
            f"{base}/task/list",
            json={"entities": [{"type": "table", "table-id": str(tables["a"].metadata.table_uuid)}]},
        )
        bad_token = api.post(f"{base}/task/list", json={"page-token": "not-a-token"})
        task_id = by_entity.json()["tasks"][0]["task-id"]
        details = api.get(f"{base}/task/{task_id}")
        moved = api.post(
            f"{base}/task/control",
            json={"action": {"action-type": "run-at", "scheduled-for": "2031-01-01T00:00:00Z"}, "task-ids": [task_id]},
        )
        after_move = api.get(f"{base}/task/by-id/{task_id}").json()  # Lakekeeper's path
        all_ids = [task["task-id"] for task in everything.json()["tasks"]]
        cancelled = api.post(f"{base}/task/control", json={"action": {"action-type": "cancel"}, "task-ids": all_ids})
        again = api.post(f"{base}/task/control", json={"action": {"action-type": "cancel"}, "task-ids": [task_id]})
        missing = api.get(f"{base}/task/{uuid.uuid4()}")
        unknown_queue = api.get(f"{base}/task-queue/nope/config")
        default_config = api.get(f"{base}/task-queue/tabular_purge/config")
        set_config = api.post(
            f"{base}/task-queue/tabular_purge/config",
            json={"queue-config": {"max-files": 10}, "max-seconds-since-last-heartbeat": 120},
        )
        config = api.get(f"{base}/task-queue/tabular_purge/config")
        after_cancel = api.post(f"{base}/task/list", json={"status": ["CANCELLED"]})
        with psycopg.connect(dsn) as conn:
            kinds = [row[0] for row in conn.execute("SELECT type FROM catalog_events WHERE type LIKE '%task%'")]

    assert [page.status_code for page in (first, second, everything, done, by_entity)] == [200] * 5
    pages = first.json()["tasks"] + second.json()["tasks"]
    assert len({task["task-id"] for task in pages}) == 2  # two pages, two different tasks
    assert second.json()["next-page-token"] is None
    assert len(all_ids) == 2
    assert done.json()["tasks"] == []
    assert by_entity.json()["tasks"][0]["entity"]["table-id"] == str(tables["a"].metadata.table_uuid)
    assert bad_token.status_code == 400
    assert bad_token.json()["error"]["type"] == "BadRequestException"
    body = details.json()
    assert (body["status"], body["queue-name"], body["attempts"]) == ("SCHEDULED", "tabular_purge", [])
    assert body["task-data"]["location"] == tables["a"].location()
    assert moved.status_code == 204
    assert after_move["scheduled-for"].startswith("2031-01-01T00:00:00")
    assert cancelled.status_code == 204
    assert {t["status"] for t in after_cancel.json()["tasks"]} == {"CANCELLED"}
    assert (again.status_code, again.json()["error"]["type"]) == (409, "TaskFinishedException")
    assert (missing.status_code, missing.json()["error"]["type"]) == (404, "NoSuchTaskException")
    assert unknown_queue.status_code == 400
    assert default_config.json() == {
        "queue-config": {"queue-name": "tabular_purge"},
        "max-seconds-since-last-heartbeat": None,
    }
    assert set_config.status_code == 204
    assert config.json() == {
        "queue-config": {"max-files": 10, "queue-name": "tabular_purge"},
        "max-seconds-since-last-heartbeat": 120,
    }
    assert all(Path(local_path(table.location())).exists() for table in tables.values())  # nothing ran
    assert kinds.count("io.catalog-es.task.cancelled.v1") == 2
    assert kinds.count("io.catalog-es.task-queue.configured.v1") == 1
