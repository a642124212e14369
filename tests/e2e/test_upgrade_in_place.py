"""A database written by an earlier release upgrades in place (issue 28): migrate, serve, every table loads as
before, new commits append the new event versions, and `audit verify` and `projections rebuild --all` pass.

The earlier release is a checkout named by `CATALOG_ES_UPGRADE_FROM` (e.g. `git worktree add /tmp/old a4d6e62`),
run on this environment's packages; without it the test is skipped.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from tests.e2e.conftest import CLI, start_catalog, stop_catalog

OLD = os.environ.get("CATALOG_ES_UPGRADE_FROM")
pytestmark = pytest.mark.skipif(not OLD, reason="CATALOG_ES_UPGRADE_FROM names no earlier checkout")


def _append(uri: str, rows: range) -> None:
    catalog = load_catalog("upgrade", type="rest", uri=uri, warehouse="demo")
    table = catalog.load_table("db.t")
    for row in rows:
        table.append(pa.table({"id": pa.array([row], pa.int64())}))


def _tables(dsn: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT id, metadata_location, metadata, version FROM tables ORDER BY id").fetchall()


def test_a_database_of_the_earlier_release_serves_rebuilds_and_verifies_when_upgraded_in_place(
    pg_dsn: str, tmp_path: Path
) -> None:
    assert OLD is not None
    # PYTHONSAFEPATH: `python -m api` must not find this checkout's `api` in the working directory first.
    old_env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "PYTHONPATH": OLD, "PYTHONSAFEPATH": "1"}
    old = start_catalog(tmp_path / "data", old_env)
    try:
        catalog = load_catalog("upgrade", type="rest", uri=f"{old.base_url}/catalog", warehouse="demo")
        catalog.create_namespace("db")
        catalog.create_table("db.t", schema=pa.schema([("id", pa.int64())]))
        _append(f"{old.base_url}/catalog", range(3))
    finally:
        stop_catalog(old)
    before = _tables(pg_dsn)

    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn}
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONSAFEPATH", None)
    subprocess.run([*CLI, "migrate"], env=env, check=True)
    new = start_catalog(tmp_path / "data", env)
    try:
        assert _tables(pg_dsn) == before  # nothing rewritten
        uri = f"{new.base_url}/catalog"
        table = load_catalog("upgrade", type="rest", uri=uri, warehouse="demo").load_table("db.t")
        assert len(table.metadata.snapshots) == 3
        assert table.scan().to_arrow().num_rows == 3
        _append(uri, range(3, 6))
        after = load_catalog("upgrade", type="rest", uri=uri, warehouse="demo").load_table("db.t")
        assert after.scan().to_arrow().num_rows == 6
    finally:
        stop_catalog(new)
    with psycopg.connect(pg_dsn) as conn:
        types = [r[0] for r in conn.execute("SELECT type FROM catalog_events WHERE type LIKE '%%.table.committed.%%'")]
    assert types == ["io.catalog-es.table.committed.v1"] * 3 + ["io.catalog-es.table.committed.v2"] * 3
    live = _tables(pg_dsn)
    verified = subprocess.run([*CLI, "audit", "verify"], env=env, capture_output=True, text=True, check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    rebuild = [*CLI, "projections", "rebuild", "--all"]
    rebuilt = subprocess.run(rebuild, env=env, capture_output=True, text=True, check=False)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert _tables(pg_dsn) == live
