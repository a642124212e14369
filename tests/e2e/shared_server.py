"""One catalog server per test module, each test on a new warehouse of its own (tests that need no more than that).

A server start costs about a second of CPU (the app, migrations, its database); a module whose tests only need an
empty warehouse shares one server: `module_catalog` (its own database, file warehouses anywhere under the run's
temporary directory, as a per-test server allows anywhere under its test's) and `warehouse` (a new file warehouse
under the test's `tmp_path`, named for no other test). Import both fixtures into the module that uses them.
A module whose tests share other settings (`serve --secure`, a secrets key) starts its own with `shared_catalog`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.databases import new_database
from tests.e2e.conftest import RestApi, RunningCatalog, open_rest, start_catalog, stop_catalog


@contextmanager
def shared_catalog(
    pg_admin_dsn: str,
    data_dir: Path,
    file_root: Path,
    settings: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
) -> Iterator[RunningCatalog]:
    """A server on a new database (dropped afterwards) whose file warehouses may lie anywhere under `file_root`;
    `settings` (`CATALOG_ES__*` variables) and `args` (of `serve`) for a module whose tests share other ones."""
    with new_database(pg_admin_dsn, "m") as dsn:
        env = {
            **os.environ,
            **(settings or {}),
            "CATALOG_ES__PG_DSN": dsn,
            "CATALOG_ES__FILE_STORAGE_ROOTS": str(file_root),
        }
        running = start_catalog(data_dir, env, args=args)
        try:
            yield running
        finally:
            stop_catalog(running)


def new_warehouse(catalog: RunningCatalog, location: Path, headers: Mapping[str, str] | None = None) -> str:
    """A new file warehouse at `location`, under a name no other test uses (created with `headers`, e.g. a
    server admin's token on a secured server); returns the name."""
    name = f"w-{uuid.uuid4().hex[:12]}"
    body = {"warehouse-name": name, "storage-profile": {"type": "file", "location": str(location)}}
    url = f"{catalog.base_url}/management/v1/warehouse"
    response = httpx.post(url, json=body, headers=dict(headers or {}), timeout=30)
    assert response.status_code in (200, 201), response.text
    return name


@pytest.fixture(scope="module")
def module_catalog(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCatalog]:
    """One server for the module's tests, each on its own `warehouse`."""
    data_dir = tmp_path_factory.mktemp("module-catalog") / "data"
    with shared_catalog(pg_admin_dsn, data_dir, tmp_path_factory.getbasetemp()) as running:
        yield running


@pytest.fixture
def warehouse(module_catalog: RunningCatalog, tmp_path: Path) -> str:
    """A new, empty file warehouse on the module's server, under the test's temporary directory."""
    return new_warehouse(module_catalog, tmp_path / "warehouse")


@pytest.fixture(name="catalog")
def module_server(module_catalog: RunningCatalog) -> RunningCatalog:
    """`catalog` in a module that imports this: the module's one server, each test on its own `warehouse`."""
    return module_catalog


@pytest.fixture(name="rest")
def warehouse_rest(module_catalog: RunningCatalog, warehouse: str) -> Iterator[RestApi]:
    """`rest` in a module that imports this: raw REST access to this test's own new warehouse on the module's server."""
    with open_rest(module_catalog, warehouse) as api:
        yield api
