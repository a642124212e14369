"""A protected table refuses Spark's `DROP TABLE` with a readable error, and drops once unprotected."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.spark.conftest import CATALOG

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def _protection(catalog: RunningCatalog, rest: RestApi, table_id: str, protected: bool) -> None:
    response = httpx.post(
        f"{catalog.base_url}/management/v1/warehouse/{rest.prefix}/table/{table_id}/protection",
        json={"protected": protected},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    assert response.json()["protected"] is protected


def test_protected_table_refuses_spark_drop_table_with_a_readable_error(
    spark: SparkSession, spark_catalog: RunningCatalog, spark_rest: RestApi, namespace: str
) -> None:
    table = f"{CATALOG}.{namespace}.kept"
    spark.sql(f"CREATE TABLE {table} (id bigint) USING iceberg")
    spark.sql(f"INSERT INTO {table} VALUES (1), (2)")
    loaded = spark_rest.http.get(spark_rest.url(f"namespaces/{namespace}/tables/kept"))
    assert loaded.status_code == 200, loaded.text
    _protection(spark_catalog, spark_rest, loaded.json()["metadata"]["table-uuid"], True)

    with pytest.raises(Exception) as refused:  # noqa: PT011 - Spark wraps the REST error in its own classes
        spark.sql(f"DROP TABLE {table}")
    message = str(refused.value)
    assert "is protected from being dropped" in message, message
    assert f"{namespace}.kept" in message
    assert [tuple(row) for row in spark.sql(f"SELECT count(*) FROM {table}").collect()] == [(2,)]

    _protection(spark_catalog, spark_rest, loaded.json()["metadata"]["table-uuid"], False)
    spark.sql(f"DROP TABLE {table}")
    assert spark_rest.http.get(spark_rest.url(f"namespaces/{namespace}/tables/kept")).status_code == 404
