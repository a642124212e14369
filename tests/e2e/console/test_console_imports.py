"""The console follows an import queued through the management API (issue 32): the Operations page lists it, its
page shows the changes it made, and a refused import lists the locations the warehouse does not cover."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from catalog_es.store.secrets import generate_secrets_key
from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.e2e.console.browser import browser  # noqa: F401 - the fixture
from tests.e2e.console.test_console import open_page, wait_for

pytestmark = pytest.mark.e2e
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


@pytest.fixture
def sealed_catalog(pg_dsn: str, tmp_path: Path) -> Iterator[RunningCatalog]:
    """A server with a secrets key (an import's source properties are sealed with it)."""
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__SECRETS_KEY": generate_secrets_key()}
    running = start_catalog(tmp_path / "data", env)
    yield running
    stop_catalog(running)


def _queue(running: RunningCatalog, warehouse_id: str, source: dict[str, str]) -> str:
    url = f"{running.base_url}/management/v1/warehouse/{warehouse_id}/import"
    response = httpx.post(url, json={"source": source, "catalog-name": "src"}, timeout=30)
    assert response.status_code == 202, response.text
    task_id = str(response.json()["task-id"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status: dict[str, Any] = httpx.get(f"{url}/{task_id}", timeout=30).json()
        if status["status"] in ("SUCCESS", "FAILED"):
            return task_id
        time.sleep(0.2)
    pytest.fail(f"import {task_id} did not end")


def test_console_shows_an_import_and_its_refusal(sealed_catalog: RunningCatalog, browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By  # noqa: PLC0415

    with psycopg.connect(sealed_catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        row = conn.execute("SELECT id, location FROM warehouses WHERE name = 'demo'").fetchone()
    assert row is not None
    warehouse_id, inside = str(row[0]), Path(str(row[1]).removeprefix("file://")) / "from-console"
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'source.db'}", "warehouse": inside.as_uri()}
    source = load_catalog("src", **props)
    source.create_namespace("shop")
    source.create_table("shop.orders", SCHEMA, location=(inside / "orders").as_uri()).append(
        pa.table({"id": pa.array([1], type=pa.int64())})
    )
    done = _queue(sealed_catalog, warehouse_id, props)
    ui = f"{sealed_catalog.base_url}/ui"

    main = open_page(browser, f"{ui}#/ops")
    imports = main.find_element(By.CSS_SELECTOR, "table[data-section='imports']")
    assert done in imports.text
    assert "SUCCESS" in imports.text

    main = open_page(browser, f"{ui}#/w/{warehouse_id}/import/{done}")
    wait_for(browser, "[data-import-status='SUCCESS']")
    counts = main.find_element(By.CSS_SELECTOR, "table[data-section='import-counts']").text
    assert "create-namespace 1" in counts
    assert "register-table 1" in counts
    assert "1 of 1 changes" not in main.text  # two changes: the namespace and the table
    assert "2 of 2 changes" in main.text

    outside = tmp_path / "elsewhere"
    source.create_namespace("legacy")
    source.create_table("legacy.old", SCHEMA, location=outside.as_uri()).append(
        pa.table({"id": pa.array([2], type=pa.int64())})
    )
    refused = _queue(sealed_catalog, warehouse_id, props)
    main = open_page(browser, f"{ui}#/w/{warehouse_id}/import/{refused}")
    wait_for(browser, "[data-import-status='FAILED']")
    uncovered = main.find_element(By.CSS_SELECTOR, "ul[data-section='uncovered']").text
    assert outside.as_uri() in uncovered
    assert "does not cover 2 location(s)" in main.text
