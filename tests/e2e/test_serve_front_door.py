"""What `catalog-es serve` tells a new user (issue 31): the warehouses that exist, auth, console and docs URLs, a
banner printed only once requests are answered, and one task worker under `--workers N` (purges run)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx
import pyarrow as pa
from pyiceberg.catalog import load_catalog
from typer.testing import CliRunner

from api.cli import cli
from tests.e2e.conftest import (
    CLI,
    TEST_ALLOWED_HOSTS,
    RunningCatalog,
    eventually,
    free_port,
    start_catalog,
    stop_catalog,
)

READY = "catalog-es is ready"


def banner_of(catalog: RunningCatalog) -> str:
    """The banner in the server's output (start_catalog writes it to serve-<port>.log)."""
    log = catalog.data_dir.parent / f"serve-{catalog.base_url.rsplit(':', 1)[1]}.log"
    eventually(lambda: "run beside it:" in log.read_text(), timeout=10)  # its last line
    text = log.read_text()
    assert READY in text, text
    return text[text.index(READY) :]


def test_with_an_external_database_and_no_warehouse_the_banner_names_none_and_links_console_and_docs(
    pg_dsn: str, tmp_path: Path
) -> None:
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__FILE_STORAGE_ROOTS": ""}  # no `demo` possible
    running = start_catalog(tmp_path / "data", env)
    try:
        banner = banner_of(running)
        warehouses = httpx.get(f"{running.base_url}/management/v1/warehouse", timeout=10).json()["warehouses"]
        console = httpx.get(f"{running.base_url}/ui", timeout=10, follow_redirects=True)
        docs = httpx.get(f"{running.base_url}/docs", timeout=10, follow_redirects=True)
    finally:
        stop_catalog(running)

    assert warehouses == []
    assert "demo" not in banner  # it once offered the default warehouse, which does not exist here
    assert "Warehouses: none yet" in banner
    assert "Auth:       off" in banner
    assert f"Console:    {running.base_url}/ui" in banner
    assert f"API docs:   {running.base_url}/docs" in banner
    assert console.status_code == 200
    assert docs.status_code == 200
    assert "`catalog-es projector run --all`" in banner  # an external database: the projectors run elsewhere


def test_the_banner_names_the_default_warehouse_and_its_file_io_when_it_exists(pg_dsn: str, tmp_path: Path) -> None:
    running = start_catalog(tmp_path / "data", {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn})
    port = running.base_url.rsplit(":", 1)[1]
    try:
        banner = banner_of(running)
        # `spark conf` asks the catalog for the warehouse's storage (auto) and names no warehouse that is not there
        conf = CliRunner().invoke(cli, ["spark", "conf", "--port", port])
        missing = CliRunner().invoke(cli, ["spark", "conf", "--port", port, "--warehouse", "nope"])
    finally:
        stop_catalog(running)

    assert conf.exit_code == 0, conf.output
    assert "spark.sql.catalog.catalog_es.io-impl=org.apache.iceberg.hadoop.HadoopFileIO" in conf.stdout
    assert missing.exit_code == 1
    assert "no warehouse 'nope'" in missing.stderr

    assert "Warehouses: demo (file)" in banner
    assert f'uri="{running.catalog_uri}", warehouse="demo")' in banner
    assert "io-impl=org.apache.iceberg.hadoop.HadoopFileIO" in banner
    assert "the task worker (purges, expiries)" in banner


def test_with_two_workers_the_banner_comes_once_requests_are_answered_and_one_task_worker_purges(
    pg_dsn: str, tmp_path: Path
) -> None:
    data_dir, port = tmp_path / "data", free_port()
    env = {
        **os.environ,
        **TEST_ALLOWED_HOSTS,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__WORKERS": "2",
        "CATALOG_ES__FILE_STORAGE_ROOTS": str(tmp_path),
        "CATALOG_ES__TASK_WORKER__POLL_SECONDS": "0.2",
        "CATALOG_ES__LOG_LEVEL": "warning",
    }
    process = subprocess.Popen(
        [*CLI, "serve", "--data-dir", str(data_dir), "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 90
        line = ""
        while READY not in line and time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line or process.poll() is None, "serve exited before its banner"
        assert READY in line
        # Printed once a worker answers: a request right now gets its answer (it once came ~20 s early).
        health = httpx.get(f"{base_url}/health", timeout=2)

        catalog = load_catalog("front", type="rest", uri=f"{base_url}/catalog", warehouse="demo")
        catalog.create_namespace("shop")
        table = catalog.create_table("shop.orders", pa.schema([("id", pa.int64())]))
        table.append(pa.table({"id": [1, 2, 3]}))
        location = Path(table.location().removeprefix("file://"))
        written = list(location.rglob("*.parquet"))
        catalog.purge_table("shop.orders")
        left = eventually(lambda: not list(location.rglob("*.parquet")), timeout=30)
    finally:
        process.terminate()
        code = process.wait(timeout=60)

    assert health.status_code == 200
    assert written
    assert left, "the purge never ran: no task worker under --workers 2"
    assert code == 0
