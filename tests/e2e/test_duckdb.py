"""DuckDB 1.5 (iceberg extension from PyPI, loaded from its wheel: no download) against catalog-es."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import create_namespace

if TYPE_CHECKING:
    import duckdb

pytestmark = pytest.mark.e2e

# The extension wheels (`duckdb-extension-<name>`) ship the binaries DuckDB would otherwise download.
_EXTENSIONS = ("httpfs", "avro", "iceberg")


def _extension_file(name: str) -> Path:
    module = pytest.importorskip(f"duckdb_extension_{name}")
    [binary] = Path(str(module.__file__)).parent.glob(f"extensions/*/{name}.duckdb_extension")
    return binary


@pytest.fixture
def duck(catalog: RunningCatalog) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection with catalog-es's warehouse `demo` attached as `cat`."""
    duckdb = pytest.importorskip("duckdb")
    connection = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    for name in _EXTENSIONS:
        connection.execute(f"LOAD '{_extension_file(name)}'")
    connection.execute(
        f"ATTACH 'demo' AS cat (TYPE iceberg, ENDPOINT '{catalog.catalog_uri}', AUTHORIZATION_TYPE 'none')"
    )
    yield connection
    connection.close()


def test_ctas_creates_and_reads_a_table_when_warehouse_is_on_local_files(
    duck: duckdb.DuckDBPyConnection, rest: RestApi
) -> None:
    create_namespace(rest, "quack")

    duck.execute("CREATE TABLE cat.quack.birds AS SELECT range AS id, 'duck ' || range AS name FROM range(3)")

    assert duck.execute("SELECT id, name FROM cat.quack.birds ORDER BY id").fetchall() == [
        (0, "duck 0"),
        (1, "duck 1"),
        (2, "duck 2"),
    ]
