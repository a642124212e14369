"""Does DuckDB 1.5 (its iceberg extension from the PyPI wheels) plan on the server? Told `scan-planning-mode=server`
by /config and loadTable, version 1.5.5 still plans itself: it reads the manifests and never calls `…/plan`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.e2e.engines.test_duckdb import _EXTENSIONS, _extension_file

pytestmark = pytest.mark.e2e


@pytest.fixture
def planning_server(pg_dsn: str, tmp_path: Path) -> Iterator[RunningCatalog]:
    """A server that tells every client to plan here (`CATALOG_ES__SCAN_PLANNING__MODE=server`)."""
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__SCAN_PLANNING__MODE": "server"}
    running = start_catalog(tmp_path / "data", env)
    yield running
    stop_catalog(running)


def test_duckdb_1_5_reads_right_rows_but_plans_client_side_when_told_to_plan_on_server(
    planning_server: RunningCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    duckdb = pytest.importorskip("duckdb")
    writer = load_catalog("w", type="rest", uri=planning_server.catalog_uri, warehouse="demo")
    assert writer.properties["scan-planning-mode"] == "server"
    writer.create_namespace("duck")
    table = writer.create_table("duck.t", schema=pa.schema([pa.field("id", pa.int64()), pa.field("c", pa.string())]))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "c": ["a", "b", "a"]}))
    assert sorted(table.scan(row_filter="c = 'a'").to_arrow()["id"].to_pylist()) == [1, 3]  # pyiceberg planned here

    log = next(tmp_path.glob("serve-*.log"))
    plans_before = log.read_text().count('/plan"')
    connection = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in _EXTENSIONS:
        connection.execute(f"LOAD '{_extension_file(name)}'")
    # The loadTable config is not empty here (it carries `scan-planning-mode`): DuckDB then takes it for vended
    # S3 credentials and wants a region, which a file warehouse has none of; the environment names one.
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    connection.execute(
        f"ATTACH 'demo' AS lake (TYPE iceberg, ENDPOINT '{planning_server.catalog_uri}', AUTHORIZATION_TYPE 'none')"
    )
    assert connection.execute("SELECT sum(id) FROM lake.duck.t WHERE c = 'a'").fetchone() == (4,)
    connection.close()
    assert duckdb.__version__.startswith("1.5")
    assert log.read_text().count('/plan"') == plans_before  # DuckDB sent no planTableScan
