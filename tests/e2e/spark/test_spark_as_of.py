"""Spark on an as-of warehouse prefix: `demo@<time>` answers SELECT with the rows of then and refuses writes."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from catalog_es.spark.conf import catalog_conf
from tests.e2e.conftest import RunningCatalog
from tests.e2e.spark.conftest import CATALOG, WAREHOUSE

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def _ids(spark: SparkSession, table: str) -> list[int]:
    return sorted(row[0] for row in spark.sql(f"SELECT id FROM {table}").collect())


def test_spark_selects_the_rows_of_then_under_an_as_of_prefix_and_cannot_write_there(
    spark: SparkSession, spark_catalog: RunningCatalog, namespace: str
) -> None:
    table = f"{namespace}.orders"
    spark.sql(f"CREATE TABLE {CATALOG}.{table} (id bigint) USING iceberg")
    spark.sql(f"INSERT INTO {CATALOG}.{table} VALUES (1), (2)")
    time.sleep(0.05)
    before = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    time.sleep(0.05)
    spark.sql(f"INSERT INTO {CATALOG}.{table} VALUES (3)")
    spark.sql(f"DELETE FROM {CATALOG}.{table} WHERE id = 1")

    past = "as_of_before"  # a second catalog, registered at run time, on the same server at `demo@<before>`
    for key, value in catalog_conf(spark_catalog.catalog_uri, f"{WAREHOUSE}@{before}", catalog=past).items():
        if key.startswith(f"spark.sql.catalog.{past}"):
            spark.conf.set(key, value)
    spark.conf.set(f"spark.sql.catalog.{past}.cache-enabled", "false")

    assert _ids(spark, f"{past}.{table}") == [1, 2]
    assert _ids(spark, f"{CATALOG}.{table}") == [2, 3]
    # The prefix's /config advertises only reads, so Iceberg's client refuses before sending (the server would 403).
    with pytest.raises(Exception, match=r"does not support endpoint: POST /v1/\{prefix\}/namespaces/"):
        spark.sql(f"INSERT INTO {past}.{table} VALUES (9)")
    assert _ids(spark, f"{CATALOG}.{table}") == [2, 3]  # nothing reached the live table
