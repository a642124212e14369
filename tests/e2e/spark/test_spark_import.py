"""Spark 3.5 reads what `catalog-es import` adopted (issue 32): tables a pyiceberg SQL catalog wrote are read by
Spark through catalog-es with the same rows as pyiceberg reads from the source, history and time travel intact,
and a Spark write to an imported table is what pyiceberg then reads through catalog-es."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DateType, LongType, NestedField, StringType

from tests.e2e.conftest import RunningCatalog, run_cli
from tests.e2e.spark.conftest import CATALOG, WAREHOUSE, warehouse_dir

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "region", StringType(), required=False),
    NestedField(3, "day", DateType(), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))


def _rows(*rows: tuple[int, str, date]) -> pa.Table:
    ids, regions, days = zip(*rows, strict=True)
    return pa.table(
        {
            "id": pa.array(ids, type=pa.int64()),
            "region": pa.array(regions, type=pa.string()),
            "day": pa.array(days, type=pa.date32()),
        }
    )


def _sorted(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(tuple(row) for row in rows)


def test_spark_reads_imported_tables_as_pyiceberg_reads_the_source(
    spark: SparkSession, spark_catalog: RunningCatalog, tmp_path: Path
) -> None:
    inside = warehouse_dir(spark_catalog) / "imported-by-spark-test"
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'source.db'}", "warehouse": inside.as_uri()}
    source = load_catalog("spark_src", **props)
    source.create_namespace("adopted")
    orders = source.create_table("adopted.orders", SCHEMA, location=(inside / "orders").as_uri(), partition_spec=SPEC)
    orders.append(_rows((1, "eu", date(2024, 1, 1)), (2, "us", date(2024, 1, 2))))
    first_snapshot = orders.refresh().metadata.current_snapshot_id
    orders.append(_rows((3, "eu", date(2024, 1, 3))))
    source.create_table("adopted.empty", SCHEMA, location=(inside / "empty").as_uri())

    pairs = [arg for key, value in props.items() for arg in ("--source", f"{key}={value}")]
    done = run_cli(["import", *pairs, "--catalog-name", "spark_src", "--warehouse", WAREHOUSE], spark_catalog.env)
    assert done.returncode == 0, done.stderr

    theirs = source.load_table("adopted.orders").scan().to_arrow()
    spark_rows = spark.sql(f"SELECT id, region, day FROM {CATALOG}.adopted.orders").collect()
    assert _sorted(spark_rows) == _sorted(zip(*(theirs[c].to_pylist() for c in ("id", "region", "day")), strict=True))
    assert spark.sql(f"SELECT count(*) FROM {CATALOG}.adopted.empty").collect()[0][0] == 0
    snapshots = spark.sql(f"SELECT snapshot_id FROM {CATALOG}.adopted.orders.snapshots").collect()
    assert len(snapshots) == 2  # the source's history came along
    past = spark.sql(f"SELECT id FROM {CATALOG}.adopted.orders VERSION AS OF {first_snapshot}").collect()
    assert _sorted(past) == [(1,), (2,)]
    partitions = spark.sql(f"SELECT partition.region FROM {CATALOG}.adopted.orders.partitions").collect()
    assert _sorted(partitions) == [("eu",), ("us",)]

    # The imported table is catalog-es's now: a Spark write is what pyiceberg reads back through catalog-es.
    spark.sql(f"INSERT INTO {CATALOG}.adopted.orders VALUES (4, 'us', date '2024-01-04')")
    target = load_catalog("target", type="rest", uri=spark_catalog.catalog_uri, warehouse=WAREHOUSE)
    mine = target.load_table("adopted.orders").scan().to_arrow()
    assert sorted(mine["id"].to_pylist()) == [1, 2, 3, 4]
    again = spark.sql(f"SELECT id, region, day FROM {CATALOG}.adopted.orders").collect()
    assert _sorted(again) == _sorted(zip(*(mine[c].to_pylist() for c in ("id", "region", "day")), strict=True))
