"""PySpark 3.5 + Iceberg 1.10 SQL against catalog-es: DDL, DML, evolution, refs, time travel, lifecycle, locations."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import AnalysisException

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import ns
from tests.e2e.spark.conftest import SUMMARY, seconds_since, warehouse_dir

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def rows(spark: SparkSession, statement: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in spark.sql(statement).collect()]


def load(rest: RestApi, namespace: str, table: str) -> dict[str, Any]:
    """The table's metadata as catalog-es serves it (404 answers None)."""
    response = rest.http.get(rest.url(f"namespaces/{ns(namespace)}/tables/{table}"))
    if response.status_code == 404:
        return {}
    assert response.status_code == 200, response.text
    metadata: dict[str, Any] = response.json()["metadata"]
    return metadata


def data_files(root: Path) -> list[Path]:
    """Parquet files under `root` (HadoopFileIO's `.crc` sidecars left out)."""
    return sorted(path for path in root.rglob("*.parquet") if path.is_file())


def orders_table(spark: SparkSession, table: str, properties: str = "") -> None:
    spark.sql(
        f"CREATE TABLE {table} (id bigint, region string, ts timestamp, amount double) USING iceberg "
        f"PARTITIONED BY (region, bucket(4, id), days(ts)) {properties}"
    )
    spark.sql(
        f"INSERT INTO {table} VALUES (1, 'eu', timestamp '2024-01-01 10:00:00', 10.0), "
        "(2, 'us', timestamp '2024-01-02 11:00:00', 20.0), (3, 'eu', timestamp '2024-01-03 12:00:00', 30.0)"
    )


def test_namespaces_are_created_listed_and_dropped_with_if_exists(spark: SparkSession, spark_rest: RestApi) -> None:
    spark.sql("CREATE NAMESPACE ns_life")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS ns_life")
    spark.sql("CREATE NAMESPACE ns_life.child COMMENT 'nested' WITH DBPROPERTIES ('team' = 'etl')")
    with pytest.raises(AnalysisException, match="already exists"):
        spark.sql("CREATE NAMESPACE ns_life")

    listed = {row[0] for row in rows(spark, "SHOW NAMESPACES")}
    children = {row[0] for row in rows(spark, "SHOW NAMESPACES IN ns_life")}
    properties = spark_rest.http.get(spark_rest.url(f"namespaces/{ns('ns_life', 'child')}")).json()["properties"]
    spark.sql("DROP NAMESPACE ns_life.child")
    spark.sql("DROP NAMESPACE IF EXISTS ns_life.child")
    spark.sql("DROP NAMESPACE IF EXISTS never_created")
    spark.sql("DROP NAMESPACE ns_life")

    assert "ns_life" in listed
    assert children == {"ns_life.child"}
    assert properties["team"] == "etl"
    assert properties["comment"] == "nested"
    assert "ns_life" not in {row[0] for row in rows(spark, "SHOW NAMESPACES")}


def test_partitioned_table_keeps_identity_bucket_and_day_partitions_when_spark_creates_and_inserts(
    spark: SparkSession, spark_rest: RestApi, spark_catalog: RunningCatalog, namespace: str
) -> None:
    orders_table(spark, f"{namespace}.orders")

    metadata = load(spark_rest, namespace, "orders")
    spec = next(s for s in metadata["partition-specs"] if s["spec-id"] == metadata["default-spec-id"])
    partitions = rows(spark, f"SELECT partition.region, partition.ts_day FROM {namespace}.orders.files")

    assert [field["transform"] for field in spec["fields"]] == ["identity", "bucket[4]", "day"]
    assert rows(spark, f"SELECT id, region, amount FROM {namespace}.orders ORDER BY id") == [
        (1, "eu", 10.0),
        (2, "us", 20.0),
        (3, "eu", 30.0),
    ]
    assert len(partitions) == 3
    assert {str(day) for _, day in partitions} == {"2024-01-01", "2024-01-02", "2024-01-03"}
    assert metadata["location"].startswith(warehouse_dir(spark_catalog).as_uri() + "/")


def test_merge_update_delete_give_expected_rows_with_copy_on_write(spark: SparkSession, namespace: str) -> None:
    table = f"{namespace}.orders"
    orders_table(spark, table)
    started = time.monotonic()
    spark.sql(
        f"MERGE INTO {table} t USING (SELECT 1 AS id, 'eu' AS region, timestamp '2024-01-01 10:00:00' AS ts, "
        "99.0 AS amount UNION ALL SELECT 4, 'us', timestamp '2024-01-04 10:00:00', 40.0) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.amount = s.amount WHEN NOT MATCHED THEN INSERT *"
    )
    SUMMARY["MERGE INTO (first in a table)"] = seconds_since(started)
    started = time.monotonic()
    spark.sql(f"UPDATE {table} SET amount = amount + 1 WHERE region = 'us'")
    SUMMARY["UPDATE (warm)"] = seconds_since(started)
    started = time.monotonic()
    spark.sql(f"DELETE FROM {table} WHERE id = 3")
    SUMMARY["DELETE (warm)"] = seconds_since(started)

    operations = [row[0] for row in rows(spark, f"SELECT operation FROM {table}.snapshots ORDER BY committed_at")]
    assert rows(spark, f"SELECT id, amount FROM {table} ORDER BY id") == [(1, 99.0), (2, 21.0), (4, 41.0)]
    assert operations == ["append", "overwrite", "overwrite", "delete"], "the DELETE drops a whole file"
    assert rows(spark, f"SELECT count(*) FROM {table}.files WHERE content = 1") == [(0,)], "copy-on-write"


def test_merge_on_read_writes_delete_files_when_table_properties_ask_for_it(
    spark: SparkSession, spark_rest: RestApi, namespace: str
) -> None:
    table = f"{namespace}.orders"
    orders_table(spark, table, "TBLPROPERTIES ('format-version' = '2')")
    spark.sql(
        f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', "
        "'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read', 'note' = 'temporary')"
    )
    spark.sql(f"DELETE FROM {table} WHERE id = 1")
    spark.sql(f"UPDATE {table} SET amount = 0 WHERE id = 2")
    spark.sql(
        f"MERGE INTO {table} t USING (SELECT 3 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.amount = -1"
    )
    spark.sql(f"ALTER TABLE {table} UNSET TBLPROPERTIES ('note')")

    properties = load(spark_rest, namespace, "orders")["properties"]
    assert rows(spark, f"SELECT id, amount FROM {table} ORDER BY id") == [(2, 0.0), (3, -1.0)]
    assert rows(spark, f"SELECT count(*) > 0 FROM {table}.files WHERE content = 1") == [(True,)], "position deletes"
    assert properties["write.delete.mode"] == "merge-on-read"
    assert "note" not in properties


def test_ctas_and_create_or_replace_table_as_select_commit_through_staged_create(
    spark: SparkSession, spark_rest: RestApi, namespace: str
) -> None:
    orders_table(spark, f"{namespace}.source")
    spark.sql(
        f"CREATE TABLE {namespace}.ctas USING iceberg PARTITIONED BY (region) AS SELECT * FROM {namespace}.source"
    )
    spark.sql(
        f"CREATE OR REPLACE TABLE {namespace}.ctas USING iceberg AS SELECT id, amount * 2 AS doubled FROM "
        f"{namespace}.source"
    )
    spark.sql(f"CREATE OR REPLACE TABLE {namespace}.fresh USING iceberg AS SELECT id FROM {namespace}.source")
    spark.sql(f"REPLACE TABLE {namespace}.fresh USING iceberg AS SELECT id, 'x' AS tag FROM {namespace}.source")
    with pytest.raises(AnalysisException, match="already exists"):
        spark.sql(f"CREATE TABLE {namespace}.ctas USING iceberg AS SELECT 1 AS id")

    replaced = load(spark_rest, namespace, "ctas")
    assert rows(spark, f"SELECT id, doubled FROM {namespace}.ctas ORDER BY id") == [(1, 20.0), (2, 40.0), (3, 60.0)]
    assert rows(spark, f"SELECT * FROM {namespace}.fresh ORDER BY id") == [(1, "x"), (2, "x"), (3, "x")]
    assert [field["name"] for field in replaced["schemas"][-1]["fields"]] == ["id", "doubled"]
    assert len(replaced["snapshots"]) == 2, "REPLACE keeps the table's history"
    assert replaced["partition-specs"][-1]["fields"] == [], "the replacement is unpartitioned"


def test_alter_table_evolves_columns_and_partition_fields(
    spark: SparkSession, spark_rest: RestApi, namespace: str
) -> None:
    table = f"{namespace}.orders"
    orders_table(spark, table)
    spark.sql(f"ALTER TABLE {table} ADD COLUMNS (channel string, scratch int)")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN amount TO total")
    spark.sql(f"ALTER TABLE {table} DROP COLUMN scratch")
    spark.sql(f"ALTER TABLE {table} DROP PARTITION FIELD days(ts)")
    spark.sql(f"ALTER TABLE {table} ADD PARTITION FIELD truncate(2, channel) AS channel_prefix")
    spark.sql(f"INSERT INTO {table} VALUES (4, 'eu', timestamp '2024-01-04 00:00:00', 40.0, 'web')")

    metadata = load(spark_rest, namespace, "orders")
    spec = next(s for s in metadata["partition-specs"] if s["spec-id"] == metadata["default-spec-id"])
    assert spark.table(table).columns == ["id", "region", "ts", "total", "channel"]
    assert [(field["name"], field["transform"]) for field in spec["fields"]] == [
        ("region", "identity"),
        ("id_bucket", "bucket[4]"),
        ("channel_prefix", "truncate[2]"),
    ]
    assert rows(spark, f"SELECT id, total, channel FROM {table} ORDER BY id") == [
        (1, 10.0, None),
        (2, 20.0, None),
        (3, 30.0, None),
        (4, 40.0, "web"),
    ]


def test_branches_tags_time_travel_and_metadata_tables(spark: SparkSession, namespace: str) -> None:
    table = f"{namespace}.orders"
    orders_table(spark, table)
    (first_snapshot, first_time), *_ = rows(
        spark, f"SELECT snapshot_id, date_format(committed_at, 'yyyy-MM-dd HH:mm:ss.SSS') FROM {table}.snapshots"
    )
    spark.sql(f"ALTER TABLE {table} CREATE TAG v1")
    spark.sql(f"ALTER TABLE {table} CREATE BRANCH audit RETAIN 7 DAYS")
    time.sleep(0.01)
    spark.sql(f"INSERT INTO {table}.branch_audit VALUES (10, 'eu', timestamp '2024-02-01 00:00:00', 1.0)")
    spark.sql(f"DELETE FROM {table} WHERE id = 1")

    assert rows(spark, f"SELECT count(*) FROM {table}") == [(2,)]
    assert rows(spark, f"SELECT count(*) FROM {table} VERSION AS OF 'audit'") == [(4,)]
    assert rows(spark, f"SELECT count(*) FROM {table} VERSION AS OF 'v1'") == [(3,)]
    assert rows(spark, f"SELECT count(*) FROM {table} VERSION AS OF {first_snapshot}") == [(3,)]
    assert rows(spark, f"SELECT count(*) FROM {table} TIMESTAMP AS OF '{first_time}'") == [(3,)]
    assert sorted(rows(spark, f"SELECT name, type FROM {table}.refs")) == [
        ("audit", "BRANCH"),
        ("main", "BRANCH"),
        ("v1", "TAG"),
    ]
    assert rows(spark, f"SELECT count(*) FROM {table}.snapshots") == [(3,)]
    assert rows(spark, f"SELECT count(*) FROM {table}.history") == [(2,)], "main only: append, delete"
    spark.sql(f"ALTER TABLE {table} DROP TAG v1")
    spark.sql(f"ALTER TABLE {table} DROP BRANCH audit")
    assert rows(spark, f"SELECT name FROM {table}.refs") == [("main",)]


def test_rename_moves_a_table_across_namespaces(spark: SparkSession, spark_rest: RestApi, namespace: str) -> None:
    orders_table(spark, f"{namespace}.before")
    spark.sql(f"CREATE NAMESPACE {namespace}_target")
    spark.sql(f"ALTER TABLE {namespace}.before RENAME TO {namespace}_target.after")

    assert load(spark_rest, namespace, "before") == {}
    assert rows(spark, f"SELECT count(*) FROM {namespace}_target.after") == [(3,)]
    assert rows(spark, f"SHOW TABLES IN {namespace}") == []


def test_drop_table_keeps_files_and_drop_purge_removes_them(
    spark: SparkSession, spark_rest: RestApi, spark_catalog: RunningCatalog, namespace: str
) -> None:
    orders_table(spark, f"{namespace}.kept")
    orders_table(spark, f"{namespace}.purged")
    kept = Path(load(spark_rest, namespace, "kept")["location"].removeprefix("file://"))
    purged = Path(load(spark_rest, namespace, "purged")["location"].removeprefix("file://"))
    assert len(data_files(kept)) == 3
    assert len(data_files(purged)) == 3

    spark.sql(f"DROP TABLE {namespace}.kept")
    spark.sql(f"DROP TABLE {namespace}.purged PURGE")
    spark.sql(f"DROP TABLE IF EXISTS {namespace}.purged")

    assert load(spark_rest, namespace, "kept") == {}
    assert load(spark_rest, namespace, "purged") == {}
    assert len(data_files(kept)) == 3
    assert data_files(purged) == [], "Spark deletes the purged table's files itself"
    assert kept.is_relative_to(warehouse_dir(spark_catalog))


def test_register_table_procedure_brings_a_dropped_table_back(spark: SparkSession, namespace: str) -> None:
    table = f"{namespace}.orders"
    orders_table(spark, table)
    [(metadata_file,)] = rows(spark, f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1")
    spark.sql(f"DROP TABLE {table}")

    registered = rows(
        spark, f"CALL system.register_table(table => '{namespace}.restored', metadata_file => '{metadata_file}')"
    )

    [(snapshot_id, records, files)] = registered
    assert (records, files) == (3, 3)
    assert rows(spark, f"SELECT snapshot_id FROM {namespace}.restored.snapshots") == [(snapshot_id,)]
    assert rows(spark, f"SELECT id FROM {namespace}.restored ORDER BY id") == [(1,), (2,), (3,)]


def test_custom_location_inside_the_warehouse_works_and_overlaps_are_refused(
    spark: SparkSession, spark_catalog: RunningCatalog, namespace: str
) -> None:
    custom = warehouse_dir(spark_catalog) / "custom" / namespace
    spark.sql(f"CREATE TABLE {namespace}.placed (id int) USING iceberg LOCATION 'file:{custom}'")
    spark.sql(f"INSERT INTO {namespace}.placed VALUES (1), (2)")

    with pytest.raises(Py4JJavaError, match="overlaps the location of another table"):
        spark.sql(f"CREATE TABLE {namespace}.same (id int) USING iceberg LOCATION 'file:{custom}'")
    with pytest.raises(Py4JJavaError, match="overlaps the location of another table"):
        spark.sql(f"CREATE TABLE {namespace}.nested (id int) USING iceberg LOCATION 'file:{custom}/nested'")
    with pytest.raises(Py4JJavaError, match="not a sub-location of the warehouse"):
        spark.sql(f"CREATE TABLE {namespace}.outside (id int) USING iceberg LOCATION 'file:/tmp/{namespace}'")

    paths = [row[0] for row in rows(spark, f"SELECT file_path FROM {namespace}.placed.files")]
    assert paths
    assert all(path.startswith(f"file:{custom}/data/") for path in paths), paths
    assert len(data_files(custom / "data")) == len(paths)
    assert rows(spark, f"SELECT count(*) FROM {namespace}.placed") == [(2,)]
    assert rows(spark, f"SHOW TABLES IN {namespace}") == [(namespace, "placed", False)]


def test_create_or_replace_as_select_moves_the_table_with_its_data_when_given_a_new_location(
    spark: SparkSession, spark_catalog: RunningCatalog, namespace: str
) -> None:
    """#29 item 1: Spark writes the data and manifests below the new location before its replace commits."""
    spark.sql(f"CREATE TABLE {namespace}.moved (id int) USING iceberg")
    spark.sql(f"INSERT INTO {namespace}.moved VALUES (1)")
    new_location = warehouse_dir(spark_catalog) / "relocated" / namespace

    spark.sql(
        f"CREATE OR REPLACE TABLE {namespace}.moved USING iceberg LOCATION 'file:{new_location}'"
        " AS SELECT * FROM VALUES (7), (8) AS t(id)"
    )

    assert rows(spark, f"SELECT id FROM {namespace}.moved ORDER BY id") == [(7,), (8,)]
    paths = [row[0] for row in rows(spark, f"SELECT file_path FROM {namespace}.moved.files")]
    assert paths
    assert all(path.startswith(f"file:{new_location}/data/") for path in paths), paths
