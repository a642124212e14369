"""Spark (Iceberg 1.10's Java reader) reads a table whose history the server rebased, and appends on top of it."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest
from pyiceberg.exceptions import CommitFailedException, ValidationException

from tests.e2e.conftest import RunningCatalog
from tests.e2e.spark.conftest import WAREHOUSE
from tests.e2e.test_server_side_rebase import (
    REBASE,
    SCHEMA,
    SPEC,
    apply_op,
    assert_valid_chain,
    client,
    live_files,
    random_ops,
    rows_of,
    run_writers,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def test_spark_reads_and_extends_a_table_whose_concurrent_commits_were_rebased(
    spark: SparkSession, spark_catalog: RunningCatalog, namespace: str
) -> None:
    ice = client(spark_catalog, WAREHOUSE)
    ice.create_table(f"{namespace}.hot", schema=SCHEMA, partition_spec=SPEC, properties=REBASE)
    rng = random.Random(23)
    plans = {writer: random_ops(rng, writer, 6) for writer in range(4)}

    def write(writer: int) -> None:
        table = client(spark_catalog, WAREHOUSE).load_table(f"{namespace}.hot")
        for op in plans[writer]:
            while True:
                try:
                    apply_op(table, op, writer)
                    break
                except (CommitFailedException, ValidationException):  # a conflict: refresh and redo, as a client would
                    table = table.refresh()

    run_writers(4, write)
    hot = ice.load_table(f"{namespace}.hot")
    chain = assert_valid_chain(hot)

    spark_rows = spark.sql(f"SELECT id, part, writer FROM {namespace}.hot").collect()
    assert sorted((row.id, row.part, row.writer) for row in spark_rows) == rows_of(hot)
    spark_files = spark.sql(f"SELECT partition.part AS part, record_count FROM {namespace}.hot.files").collect()
    assert sorted((row.part, row.record_count) for row in spark_files) == live_files(hot)
    assert spark.sql(f"SELECT count(*) AS n FROM {namespace}.hot.snapshots").collect()[0].n == len(chain)

    spark.sql(f"INSERT INTO {namespace}.hot VALUES (999999, 1, 9)")
    extended = ice.load_table(f"{namespace}.hot")
    assert rows_of(extended) == sorted([*rows_of(hot), (999999, 1, 9)])
    assert assert_valid_chain(extended)[:-1] == chain
