"""`migrate` and `serve` refuse a database a newer catalog-es migrated, and say how to force."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import psycopg

from api.runtime.database import migrate
from tests.e2e.forked import run_cli


def _newer(dsn: str) -> None:
    asyncio.run(migrate(dsn))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (name) VALUES ('9999_from_the_future')")


def _run(args: list[str], dsn: str, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CATALOG_ES__PG_DSN": dsn, "CATALOG_ES__LOG_LEVEL": "warning", **extra}
    return run_cli([*args, "--data-dir", str(tmp_path / "data")], env, timeout=120)


def test_migrate_refuses_a_database_migrated_by_a_newer_version(pg_dsn: str, tmp_path: Path) -> None:
    _newer(pg_dsn)
    refused = _run(["migrate"], pg_dsn, tmp_path)
    forced = _run(["migrate", "--allow-newer-schema"], pg_dsn, tmp_path)
    by_setting = _run(["migrate"], pg_dsn, tmp_path, CATALOG_ES__ALLOW_NEWER_SCHEMA="true")

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "9999_from_the_future" in refused.stderr
    assert "--allow-newer-schema" in refused.stderr
    assert "CATALOG_ES__ALLOW_NEWER_SCHEMA" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert (forced.returncode, forced.stdout.strip()) == (0, "schema is up to date")
    assert by_setting.returncode == 0, by_setting.stderr


def test_serve_refuses_a_database_migrated_by_a_newer_version(pg_dsn: str, tmp_path: Path) -> None:
    _newer(pg_dsn)
    refused = _run(["serve", "--port", "1"], pg_dsn, tmp_path)

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "newer catalog-es" in refused.stderr
    assert "9999_from_the_future" in refused.stderr


def test_migrate_accepts_a_database_it_migrated_itself(pg_dsn: str) -> None:
    asyncio.run(migrate(pg_dsn))
    assert asyncio.run(migrate(pg_dsn)) == []
