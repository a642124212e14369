"""One catalog-es server and one SparkSession (local[2], offline Iceberg jars) shared by the Spark suite."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from catalog_es.spark import session, spark_jars
from catalog_es.spark.jars import cached_jars, default_jars_dir
from tests.databases import new_database
from tests.e2e.conftest import RestApi, RunningCatalog, start_catalog, stop_catalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "catalog_es"
WAREHOUSE = "demo"
SUMMARY: dict[str, str] = {}  # printed at the end of the run: jar assembly, session start, first statement ...


def seconds_since(started: float) -> str:
    return f"{time.monotonic() - started:.2f} s"


def spark_conf() -> dict[str, str]:
    """Small shuffles for 2 cores; no table cache, so every statement sees the other session's commits; the driver
    JVM compiles with C1 only and collects serially (short statements on 2 cores: ~10 % less CPU for the suite)."""
    return {
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        f"spark.sql.catalog.{CATALOG}.cache-enabled": "false",
        "spark.sql.session.timeZone": "UTC",
    }


@pytest.fixture(scope="session")
def spark_jars_dir() -> Path:
    """The jar cache (`CATALOG_ES_SPARK_JARS_DIR` or ~/.cache/catalog-es/spark-jars), assembled here when cold."""
    directory = default_jars_dir()
    cold = cached_jars(directory.resolve()) is None
    started = time.monotonic()
    spark_jars(directory)
    SUMMARY["jar assembly (cold)" if cold else "jar assembly (warm)"] = seconds_since(started)
    return directory


@pytest.fixture(scope="session")
def spark_catalog(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCatalog]:
    """catalog-es on its own database for the whole Spark suite; warehouse `demo` on the local filesystem."""
    with new_database(pg_admin_dsn, "spark") as dsn:
        running = start_catalog(tmp_path_factory.mktemp("spark") / "data", {**os.environ, "CATALOG_ES__PG_DSN": dsn})
        yield running
        stop_catalog(running)


@pytest.fixture(scope="session")
def spark(spark_catalog: RunningCatalog, spark_jars_dir: Path) -> Iterator[SparkSession]:
    started = time.monotonic()
    spark_session = session(
        spark_catalog.catalog_uri, WAREHOUSE, master="local[2]", jars_dir=spark_jars_dir, conf=spark_conf()
    )
    spark_session.sparkContext.setLogLevel("ERROR")
    SUMMARY["session start"] = seconds_since(started)
    started = time.monotonic()
    spark_session.sql("SHOW NAMESPACES").collect()
    SUMMARY["first statement (SHOW NAMESPACES)"] = seconds_since(started)
    yield spark_session
    spark_session.stop()


@pytest.fixture(scope="session")
def spark_rest(spark_catalog: RunningCatalog) -> Iterator[RestApi]:
    """Raw REST access to the Spark suite's catalog, to check what Spark committed."""
    with httpx.Client(base_url=f"{spark_catalog.catalog_uri}/v1/", timeout=30) as http:
        config = http.get("config", params={"warehouse": WAREHOUSE})
        assert config.status_code == 200, config.text
        yield RestApi(http=http, prefix=config.json()["defaults"]["prefix"])


@pytest.fixture
def namespace(spark: SparkSession, request: pytest.FixtureRequest) -> str:
    """A fresh namespace named after the test."""
    name = request.node.name.removeprefix("test_")[:40].replace("[", "_").replace("]", "")
    spark.sql(f"CREATE NAMESPACE {name}")
    return name


def warehouse_dir(catalog: RunningCatalog) -> Path:
    return catalog.data_dir / "warehouse" / WAREHOUSE


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if SUMMARY:
        terminalreporter.write_sep("-", "Spark timings")
        for name, value in SUMMARY.items():
            terminalreporter.write_line(f"{name:<42} {value}")
