"""A table written through catalog-es by pyiceberg, in two snapshots, for the other engines to read and write."""

from __future__ import annotations

import pyarrow as pa
import pytest
from msgspec import Struct
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType

from tests.e2e.conftest import RunningCatalog

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "city", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
)
FIRST = pa.table(
    {"id": [1, 2, 3], "city": ["Oslo", "Lima", "Oslo"], "amount": [10.0, 20.5, 30.0]},
    schema=SCHEMA.as_arrow(),
)
SECOND = pa.table({"id": [4], "city": ["Pune"], "amount": [4.25]}, schema=SCHEMA.as_arrow())


class Seeded(Struct):
    """The catalog client, the table, and its first snapshot id (for time travel)."""

    catalog: Catalog
    table: Table
    first_snapshot_id: int


@pytest.fixture
def pyiceberg_catalog(catalog: RunningCatalog) -> Catalog:
    return load_catalog("engines", type="rest", uri=catalog.catalog_uri, warehouse="demo")


@pytest.fixture
def seeded(pyiceberg_catalog: Catalog) -> Seeded:
    """`engines.sales`, partitioned by city, holding FIRST then FIRST + SECOND."""
    pyiceberg_catalog.create_namespace("engines")
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="city"))
    table = pyiceberg_catalog.create_table("engines.sales", schema=SCHEMA, partition_spec=spec)
    table.append(FIRST)
    first = table.current_snapshot()
    assert first is not None
    table.append(SECOND)
    return Seeded(catalog=pyiceberg_catalog, table=table, first_snapshot_id=first.snapshot_id)


def rows(table: pa.Table) -> list[tuple[object, ...]]:
    """The rows of an Arrow table as sorted tuples (engines return them in any order)."""
    return sorted(tuple(row.values()) for row in table.to_pylist())


ALL_ROWS = rows(pa.concat_tables([FIRST, SECOND]))
FIRST_ROWS = rows(FIRST)
