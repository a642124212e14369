"""Spark on a soft-delete warehouse: DROP TABLE hides the table, the management API lists and undrops it, and
Spark reads the same rows again."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest
from pyspark.errors import AnalysisException

from catalog_es.spark.conf import catalog_conf
from tests.e2e.conftest import RunningCatalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def test_spark_drop_on_a_soft_warehouse_is_undone_by_undrop(spark: SparkSession, spark_catalog: RunningCatalog) -> None:
    api = httpx.Client(base_url=f"{spark_catalog.base_url}/management/v1", timeout=30)
    body = {
        "warehouse-name": "soft_spark",
        "storage-profile": {"type": "file", "location": str(spark_catalog.data_dir / "warehouse" / "soft_spark")},
        "delete-profile": {"type": "soft", "expiration-seconds": 3600},
    }
    created = api.post("/warehouse", json=body)
    assert created.status_code == 201, created.text
    warehouse_id = created.json()["warehouse-id"]
    soft = "soft_spark"  # a second Spark catalog, registered at run time, on the new warehouse
    for key, value in catalog_conf(spark_catalog.catalog_uri, "soft_spark", catalog=soft).items():
        if key.startswith(f"spark.sql.catalog.{soft}"):
            spark.conf.set(key, value)
    spark.conf.set(f"spark.sql.catalog.{soft}.cache-enabled", "false")

    spark.sql(f"CREATE NAMESPACE {soft}.sales")
    spark.sql(f"CREATE TABLE {soft}.sales.orders (id bigint, item string) USING iceberg")
    spark.sql(f"INSERT INTO {soft}.sales.orders VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"DROP TABLE {soft}.sales.orders")

    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM {soft}.sales.orders").collect()
    assert [row[1] for row in spark.sql(f"SHOW TABLES IN {soft}.sales").collect()] == []
    listed = api.get(f"/warehouse/{warehouse_id}/deleted-tabulars")
    assert listed.status_code == 200, listed.text
    [deleted] = listed.json()["tabulars"]
    assert (deleted["name"], deleted["namespace"]) == ("orders", ["sales"])

    undropped = api.post(
        f"/warehouse/{warehouse_id}/deleted-tabulars/undrop",
        json={
            "targets": [
                {"type": "table", "id": deleted["id"]},
            ]
        },
    )
    assert undropped.status_code == 200, undropped.text
    rows = spark.sql(f"SELECT id, item FROM {soft}.sales.orders ORDER BY id").collect()
    assert [tuple(row) for row in rows] == [(1, "a"), (2, "b"), (3, "c")]
    spark.sql(f"INSERT INTO {soft}.sales.orders VALUES (4, 'd')")  # and writable again
    assert spark.sql(f"SELECT count(*) FROM {soft}.sales.orders").collect()[0][0] == 4
