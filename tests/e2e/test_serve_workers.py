"""`catalog-es serve --workers N` (CATALOG_ES__WORKERS): N uvicorn worker processes share the port and the database."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import psutil

from tests.e2e.conftest import start_catalog, stop_catalog


def test_every_worker_serves_the_same_catalog_when_two_workers_run(pg_dsn: str, tmp_path: Path) -> None:
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__WORKERS": "2", "CATALOG_ES__LOG_LEVEL": "warning"}
    running = start_catalog(tmp_path / "data", env)
    try:
        children = psutil.Process(running.process.pid).children(recursive=True)
        workers = [proc for proc in children if "spawn_main" in " ".join(proc.cmdline())]  # uvicorn spawns them
        with httpx.Client(base_url=f"{running.catalog_uri}/v1/", timeout=30) as http:
            prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
            created = http.post(f"{prefix}/namespaces", json={"namespace": ["shared"], "properties": {"k": "v"}})
            # New connections land on either worker; every one of them must see the namespace.
            seen = [httpx.get(f"{running.catalog_uri}/v1/{prefix}/namespaces/shared").status_code for _ in range(8)]
    finally:
        code = stop_catalog(running)

    assert len(workers) == 2
    assert created.status_code == 200, created.text
    assert seen == [200] * 8
    assert code == 0
