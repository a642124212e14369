"""PySpark 3.5 + Iceberg 1.10 on format-version 3: created, written and read, and a v2 table upgraded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import ns

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in spark.sql(statement).collect()]


def served(rest: RestApi, namespace: str, table: str) -> dict[str, Any]:
    response = rest.http.get(rest.url(f"namespaces/{ns(namespace)}/tables/{table}"))
    assert response.status_code == 200, response.text
    metadata: dict[str, Any] = response.json()["metadata"]
    return metadata


def lineage(metadata: dict[str, Any]) -> list[tuple[int | None, int | None]]:
    """(first-row-id, added-rows) of each snapshot, oldest first."""
    snapshots = sorted(metadata["snapshots"], key=lambda snapshot: snapshot["sequence-number"])
    return [(snapshot.get("first-row-id"), snapshot.get("added-rows")) for snapshot in snapshots]


def test_v3_table_is_created_written_and_read_with_row_lineage(
    spark: SparkSession, spark_rest: RestApi, namespace: str
) -> None:
    table = f"{namespace}.events"
    spark.sql(f"CREATE TABLE {table} (id bigint, name string) USING iceberg TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"INSERT INTO {table} VALUES (4, 'd'), (5, 'e')")

    assert rows(spark, f"SELECT id, name FROM {table} ORDER BY id") == [
        (1, "a"),
        (2, "b"),
        (3, "c"),
        (4, "d"),
        (5, "e"),
    ]
    assert sorted(row[0] for row in rows(spark, f"SELECT _row_id FROM {table}")) == [0, 1, 2, 3, 4]
    metadata = served(spark_rest, namespace, "events")
    assert metadata["format-version"] == 3
    assert lineage(metadata) == [(0, 3), (3, 2)]
    assert metadata["next-row-id"] == 5


def test_v2_table_upgraded_to_v3_keeps_its_rows_and_starts_row_lineage(
    spark: SparkSession, spark_rest: RestApi, namespace: str
) -> None:
    table = f"{namespace}.legacy"
    spark.sql(f"CREATE TABLE {table} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {table} VALUES (1), (2)")

    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {table} VALUES (3)")

    assert rows(spark, f"SELECT id FROM {table} ORDER BY id") == [(1,), (2,), (3,)]
    metadata = served(spark_rest, namespace, "legacy")
    assert metadata["format-version"] == 3
    before_upgrade, after_upgrade = lineage(metadata)
    assert before_upgrade == (None, None)
    first_row_id, added_rows = after_upgrade
    assert first_row_id == 0
    assert added_rows is not None
    assert metadata["next-row-id"] == added_rows


def test_v3_table_is_created_as_select_through_a_staged_create(
    spark: SparkSession, spark_rest: RestApi, namespace: str
) -> None:
    spark.sql(f"CREATE TABLE {namespace}.source (id bigint) USING iceberg")
    spark.sql(f"INSERT INTO {namespace}.source VALUES (1), (2), (3), (4)")

    spark.sql(
        f"CREATE TABLE {namespace}.copy USING iceberg TBLPROPERTIES ('format-version'='3') "
        f"AS SELECT id FROM {namespace}.source WHERE id > 1"
    )

    assert rows(spark, f"SELECT id FROM {namespace}.copy ORDER BY id") == [(2,), (3,), (4,)]
    metadata = served(spark_rest, namespace, "copy")
    assert metadata["format-version"] == 3
    assert lineage(metadata) == [(0, 3)]
    assert metadata["next-row-id"] == 3
