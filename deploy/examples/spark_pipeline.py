"""An example Spark pipeline on catalog-es: load, MERGE/UPDATE/DELETE, evolve, branch, time travel, maintain.

Run it against a catalog started with `catalog-es serve` (jars are assembled offline on first use):

    .venv/bin/pip install -e '.[spark]'
    .venv/bin/python deploy/examples/spark_pipeline.py --uri http://127.0.0.1:8181/catalog --warehouse demo
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

REGIONS = "array('eu', 'us', 'apac', 'latam')"


class Pipeline:
    """Runs the steps on `spark`, printing each one with its duration; `results` keeps what each step observed."""

    def __init__(self, spark: SparkSession, table: str) -> None:
        self.spark = spark
        self.table = table
        self.results: dict[str, Any] = {}

    def sql(self, statement: str) -> list[Any]:
        return self.spark.sql(statement).collect()

    def run(self, *statements: str) -> None:
        for statement in statements:
            self.spark.sql(statement).collect()

    def scalar(self, statement: str) -> Any:
        return self.sql(statement)[0][0]

    def step(self, name: str, action: Callable[[], Any]) -> Any:
        started = time.monotonic()
        result = action()
        self.results[name] = result
        print(f"{name:<28} {time.monotonic() - started:6.2f} s  {result if result is not None else ''}")
        return result

    def count(self, suffix: str = "") -> int:
        return int(self.scalar(f"SELECT count(*) FROM {self.table} {suffix}"))

    def current_snapshot(self) -> tuple[int, str]:
        """(snapshot id, commit time as text in the session time zone) of the newest snapshot."""
        row = self.sql(
            f"SELECT snapshot_id, date_format(committed_at, 'yyyy-MM-dd HH:mm:ss.SSS') FROM {self.table}.snapshots "
            "ORDER BY committed_at DESC LIMIT 1"
        )[0]
        return int(row[0]), str(row[1])


def _orders(spark: SparkSession, start: int, end: int) -> DataFrame:
    """Generated orders `start` .. `end - 1`: 4 regions x 30 days, every tenth one cancelled."""
    return spark.range(start, end).selectExpr(
        "id AS order_id",
        "id % 5000 AS customer_id",
        f"element_at({REGIONS}, CAST(id % 4 AS int) + 1) AS region",
        "timestamp_seconds(1704067200 + (id % 30) * 86400 + id % 86400) AS ordered_at",
        "CAST((id % 997) + 0.99 AS decimal(12,2)) AS amount",
        "CASE WHEN id % 10 = 0 THEN 'cancelled' ELSE 'new' END AS status",
    )


def run(spark: SparkSession, namespace: str = "examples", rows: int = 300_000) -> dict[str, Any]:
    """The whole pipeline on table `<namespace>.orders` of the session's default catalog; returns what it saw."""
    table = f"{namespace}.orders"
    p = Pipeline(spark, table)
    p.step("create namespace", lambda: p.run(f"CREATE NAMESPACE IF NOT EXISTS {namespace}"))
    p.step("drop old table", lambda: p.run(f"DROP TABLE IF EXISTS {table} PURGE"))
    p.step(
        "create table",
        lambda: p.run(
            f"CREATE TABLE {table} (order_id bigint, customer_id bigint, region string, ordered_at timestamp, "
            "amount decimal(12,2), status string) USING iceberg "
            "PARTITIONED BY (region, days(ordered_at)) TBLPROPERTIES ('format-version'='2')"
        ),
    )

    def load(batches: int = 3) -> int:
        for batch in range(batches):  # several appends, so each partition gets several files to compact later
            _orders(spark, rows * batch // batches, rows * (batch + 1) // batches).writeTo(table).append()
        return p.count()

    p.step("load rows", load)
    load_snapshot, load_time = p.step("snapshot after load", p.current_snapshot)
    p.step("tag after_load", lambda: p.run(f"ALTER TABLE {table} CREATE TAG after_load"))
    time.sleep(0.01)  # TIMESTAMP AS OF the load must fall before the next commit

    def merge() -> int:
        # Ship 1,000 existing orders and add 500 new ones.
        spark.range(rows - 1000, rows + 500).selectExpr(
            "id AS order_id",
            "id % 5000 AS customer_id",
            f"element_at({REGIONS}, CAST(id % 4 AS int) + 1) AS region",
            "timestamp_seconds(1704067200 + (id % 30) * 86400) AS ordered_at",
            "CAST(10.00 AS decimal(12,2)) AS amount",
            "'shipped' AS status",
        ).createOrReplaceTempView("order_updates")
        p.run(
            f"MERGE INTO {table} t USING order_updates s ON t.order_id = s.order_id "
            "WHEN MATCHED THEN UPDATE SET t.status = s.status "
            "WHEN NOT MATCHED THEN INSERT *"
        )
        return int(p.scalar(f"SELECT count(*) FROM {table} WHERE status = 'shipped'"))

    p.step("merge into", merge)
    p.step(
        "update (copy-on-write)",
        lambda: p.run(f"UPDATE {table} SET amount = amount * 2 WHERE status = 'shipped' AND region = 'eu'"),
    )

    def delete() -> int:
        p.run(f"DELETE FROM {table} WHERE status = 'cancelled'")
        return p.count()

    p.step("delete cancelled", delete)

    def evolve() -> list[str]:
        p.run(f"ALTER TABLE {table} ADD COLUMN channel string", f"ALTER TABLE {table} RENAME COLUMN amount TO total")
        return [field.name for field in spark.table(table).schema.fields]

    p.step("evolve schema", evolve)
    p.step("branch audit", lambda: p.run(f"ALTER TABLE {table} CREATE BRANCH audit"))

    def write_branch() -> tuple[int, int]:
        row = "(-1, 1, 'eu', timestamp '2024-02-01 00:00:00', 1.00, 'new', 'web')"
        p.run(f"INSERT INTO {table}.branch_audit VALUES {row}")
        return p.count("VERSION AS OF 'audit'"), p.count()

    p.step("write to branch (audit, main)", write_branch)
    p.step("version as of load", lambda: p.count(f"VERSION AS OF {load_snapshot}"))
    p.step("timestamp as of load", lambda: p.count(f"TIMESTAMP AS OF '{load_time}'"))
    p.step("tag after_load count", lambda: p.count("VERSION AS OF 'after_load'"))
    p.step("data files before rewrite", lambda: int(p.scalar(f"SELECT count(*) FROM {table}.files")))

    def rewrite() -> dict[str, Any]:
        options = "map('min-input-files', '2')"  # the default skips partitions with fewer than 5 files
        return dict(p.sql(f"CALL system.rewrite_data_files(table => '{table}', options => {options})")[0].asDict())

    p.step("rewrite_data_files", rewrite)
    p.step("data files after rewrite", lambda: int(p.scalar(f"SELECT count(*) FROM {table}.files")))

    def expire() -> dict[str, Any]:
        now = p.scalar("SELECT date_format(current_timestamp(), 'yyyy-MM-dd HH:mm:ss.SSS')")
        arguments = f"table => '{table}', older_than => TIMESTAMP '{now}', retain_last => 1"
        return dict(p.sql(f"CALL system.expire_snapshots({arguments})")[0].asDict())

    p.step("expire_snapshots", expire)
    p.step("snapshots kept", lambda: int(p.scalar(f"SELECT count(*) FROM {table}.snapshots")))
    p.step("refs", lambda: sorted((row.name, row.type) for row in p.sql(f"SELECT * FROM {table}.refs")))
    p.step("final rows", p.count)
    return p.results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default="http://127.0.0.1:8181/catalog")
    parser.add_argument("--warehouse", default="demo")
    parser.add_argument("--namespace", default="examples")
    parser.add_argument("--rows", type=int, default=300_000)
    args = parser.parse_args()

    from catalog_es.spark import session  # noqa: PLC0415 - keeps `run` importable without the helper

    spark = session(args.uri, args.warehouse, conf={"spark.sql.shuffle.partitions": "4"})
    spark.sparkContext.setLogLevel("WARN")
    try:
        run(spark, args.namespace, args.rows)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
