"""A maintenance job whose lease is lost is stopped on Spark too (issue 30): `MaintenanceRunner.cancel(job_id)`,
called from the event loop's thread, interrupts the Spark jobs the job's own thread started in its job group
(PySpark's pinned-thread mode keeps the group per thread, which is what `run` relies on)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import pytest

from catalog_es.spark.maintenance import CatalogAccess, MaintenanceRunner
from tests.e2e.conftest import RunningCatalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def test_cancel_interrupts_the_spark_jobs_of_the_job_group_started_in_another_thread(
    spark: SparkSession, spark_catalog: RunningCatalog
) -> None:
    runner = MaintenanceRunner(spark, CatalogAccess(uri=spark_catalog.catalog_uri), orphan_floor_seconds=0)
    outcome: dict[str, object] = {}

    def job() -> None:  # what `run` does in its worker thread: join the group, then run Spark jobs
        spark.sparkContext.setJobGroup("task-1:1", "catalog-es maintenance test", interruptOnCancel=True)
        try:
            outcome["rows"] = spark.range(0, 10**12, numPartitions=2).selectExpr("sum(id)").collect()
        except Exception as error:  # Py4JJavaError: the job group was cancelled
            outcome["error"] = str(error)

    thread = threading.Thread(target=job)
    thread.start()
    deadline = time.monotonic() + 60
    while not spark.sparkContext.statusTracker().getJobIdsForGroup("task-1:1") and time.monotonic() < deadline:
        time.sleep(0.2)
    runner.cancel("task-1:1")
    thread.join(60)

    assert not thread.is_alive(), "the Spark job ran on after its group was cancelled"
    assert "rows" not in outcome
    assert "cancel" in str(outcome.get("error", "")).lower()
