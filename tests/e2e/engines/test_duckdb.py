"""DuckDB 1.5's iceberg extension, loaded from the PyPI wheels (DuckDB's own download site is not used)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.engines.conftest import ALL_ROWS, FIRST_ROWS, Seeded, rows
from tests.e2e.rest_helpers import create_namespace

if TYPE_CHECKING:
    import duckdb

# `duckdb-extension-<name>` wheels ship the binaries DuckDB would otherwise fetch; iceberg needs avro and httpfs.
_EXTENSIONS = ("httpfs", "avro", "iceberg")


def _extension_file(name: str) -> Path:
    module = pytest.importorskip(f"duckdb_extension_{name}")
    [binary] = Path(str(module.__file__)).parent.glob(f"extensions/*/{name}.duckdb_extension")
    return binary


@pytest.fixture
def duck(catalog: RunningCatalog) -> Iterator[duckdb.DuckDBPyConnection]:
    """DuckDB with catalog-es's warehouse `demo` attached as `lake`; downloads switched off."""
    duckdb = pytest.importorskip("duckdb")
    config = {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    connection = duckdb.connect(config=config)
    for name in _EXTENSIONS:
        connection.execute(f"LOAD '{_extension_file(name)}'")
    connection.execute(
        f"ATTACH 'demo' AS lake (TYPE iceberg, ENDPOINT '{catalog.catalog_uri}', AUTHORIZATION_TYPE 'none')"
    )
    yield connection
    connection.close()


def test_duckdb_reads_the_current_snapshot_and_an_older_one(duck: duckdb.DuckDBPyConnection, seeded: Seeded) -> None:
    assert rows(duck.execute("SELECT id, city, amount FROM lake.engines.sales").to_arrow_table()) == ALL_ROWS
    old = duck.execute(
        f"SELECT id, city, amount FROM lake.engines.sales AT (VERSION => {seeded.first_snapshot_id})"
    ).to_arrow_table()
    assert rows(old) == FIRST_ROWS
    total = duck.execute("SELECT sum(amount) FROM lake.engines.sales WHERE city = 'Oslo'").fetchone()
    assert total == (40.0,)
    assert ("sales",) in duck.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()


def test_duckdb_inserts_and_pyiceberg_reads_the_new_snapshot(duck: duckdb.DuckDBPyConnection, seeded: Seeded) -> None:
    duck.execute("INSERT INTO lake.engines.sales VALUES (7, 'Baku', 3.5), (8, 'Oslo', 0.5)")

    reloaded = seeded.catalog.load_table("engines.sales")
    assert len(reloaded.snapshots()) == 3
    expected = sorted([*ALL_ROWS, (7, "Baku", 3.5), (8, "Oslo", 0.5)])
    assert rows(reloaded.scan().to_arrow()) == expected
    assert rows(duck.execute("SELECT id, city, amount FROM lake.engines.sales").to_arrow_table()) == expected


def test_duckdb_ctas_creates_and_reads_a_table_when_the_warehouse_is_on_local_files(
    duck: duckdb.DuckDBPyConnection, rest: RestApi
) -> None:
    """DuckDB writes a staged table's first files itself: the catalog must have made its directories."""
    create_namespace(rest, "quack")

    duck.execute("CREATE TABLE lake.quack.birds AS SELECT range AS id, 'duck ' || range AS name FROM range(3)")

    assert duck.execute("SELECT id, name FROM lake.quack.birds ORDER BY id").fetchall() == [
        (0, "duck 0"),
        (1, "duck 1"),
        (2, "duck 2"),
    ]
