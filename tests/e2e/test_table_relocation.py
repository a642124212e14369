"""A table moved and written in one commit (a replace transaction with a new location, Spark's CREATE OR
REPLACE … LOCATION … AS SELECT): the client's own files may lie at the new location, no one else's."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import BadRequestError
from pyiceberg.table import Table, Transaction
from pyiceberg.table.update import SetLocationUpdate

from catalog_es.locations import local_path
from tests.e2e.conftest import RunningCatalog

pytestmark = pytest.mark.e2e

ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64())})


@pytest.fixture
def iceberg(catalog: RunningCatalog) -> Catalog:
    made = load_catalog("x", type="rest", uri=catalog.catalog_uri, warehouse="demo")
    made.create_namespace("shop")
    return made


def _moved_and_written(table: Table, location: str) -> Transaction:
    """What a Java replace transaction with a new location does before it commits: its data files, manifests and
    manifest list are written there (pyiceberg would put the manifests at the old location, so it is shown it)."""
    moved = Table(
        table.name(),
        metadata=table.metadata.model_copy(update={"location": location}),
        metadata_location=table.metadata_location,
        io=table.io,
        catalog=table.catalog,
    )
    transaction = moved.transaction()
    transaction._apply((SetLocationUpdate(location=location),))  # pyiceberg has no public update_location
    transaction.append(ROWS)
    return transaction


def _files(directory: Path) -> set[Path]:
    return {path for path in directory.rglob("*") if path.is_file()}


def test_table_moves_and_gets_data_in_one_commit_when_the_new_location_holds_only_its_files(
    iceberg: Catalog,
) -> None:
    table = iceberg.create_table("shop.t", schema=ROWS.schema)
    new_location = f"{table.location()}_moved"
    transaction = _moved_and_written(table, new_location)
    written = _files(Path(local_path(new_location)))
    assert {path.parent.name for path in written} == {"data", "metadata"}  # all of them, before the commit
    for data_file in [path for path in written if path.suffix == ".parquet"]:  # Hadoop's checksum sidecar
        data_file.with_name(f".{data_file.name}.crc").write_bytes(b"crc")

    transaction.commit_transaction()

    loaded = iceberg.load_table("shop.t")
    assert loaded.location() == new_location
    assert loaded.scan().to_arrow().column("id").to_pylist() == [1, 2, 3]


def test_table_move_is_refused_when_the_new_location_holds_files_the_commit_does_not_reference(
    iceberg: Catalog,
) -> None:
    table = iceberg.create_table("shop.t", schema=ROWS.schema)
    new_location = f"{table.location()}_moved"
    precious = Path(local_path(new_location)) / "data" / "precious.parquet"
    precious.parent.mkdir(parents=True)
    precious.write_bytes(b"someone else's")
    transaction = _moved_and_written(table, new_location)

    with pytest.raises(BadRequestError, match="is not empty"):
        transaction.commit_transaction()

    assert precious.read_bytes() == b"someone else's"
    assert iceberg.load_table("shop.t").location() == table.location()
