"""One catalog-es server and one JVM with Iceberg 1.10.2's `RESTCatalog` (the client Spark, Trino, Flink use)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from catalog_es.spark import spark_jars
from catalog_es.spark.jars import default_jars_dir
from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.e2e.java.jvm import Java, start_gateway

WAREHOUSE = "demo"


@pytest.fixture(scope="session")
def java() -> Iterator[Java]:
    gateway = start_gateway(spark_jars(default_jars_dir()))
    yield Java(gateway)
    gateway.shutdown()


@pytest.fixture(scope="session")
def java_server(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCatalog]:
    """catalog-es on its own database for the Java suite; warehouse `demo` on the local filesystem."""
    with new_database(pg_admin_dsn, "java") as dsn:
        running = start_catalog(tmp_path_factory.mktemp("java") / "data", {**os.environ, "CATALOG_ES__PG_DSN": dsn})
        yield running
        stop_catalog(running)


def rest_catalog(java: Java, server: RunningCatalog, name: str = "catalog_es") -> Any:
    """A fresh `org.apache.iceberg.rest.RESTCatalog`, as Spark configures it (no client-side cache)."""
    catalog = java.iceberg.rest.RESTCatalog()
    catalog.setConf(java.jvm.org.apache.hadoop.conf.Configuration())
    catalog.initialize(
        name,
        {
            "uri": server.catalog_uri,
            "warehouse": WAREHOUSE,
            "io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
            "rest-metrics-reporting-enabled": "true",
        },
    )
    return catalog


@pytest.fixture
def catalog(java: Java, java_server: RunningCatalog) -> Iterator[Any]:
    client = rest_catalog(java, java_server)
    yield client
    client.close()


@pytest.fixture
def namespace(java: Java, catalog: Any, request: pytest.FixtureRequest) -> Any:
    """A fresh namespace named after the test."""
    base, _, param = request.node.name.removeprefix("test_").partition("[")
    param = param.removesuffix("]")
    name = f"{base[: 39 - len(param)]}_{param}" if param else base[:40]  # parametrised runs each get their own
    created = java.namespace(name)
    catalog.createNamespace(created)
    return created
