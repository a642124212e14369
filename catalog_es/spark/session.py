"""Build a SparkSession wired to a running catalog-es (pyspark is imported only here, and only when called)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from catalog_es.spark.conf import catalog_conf
from catalog_es.spark.jars import spark_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_URI = "http://127.0.0.1:8181/catalog"  # `catalog-es serve` on its defaults
LOCAL_SPARK = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


def session(
    uri: str = DEFAULT_URI,
    warehouse: str = "demo",
    *,
    catalog: str = "catalog_es",
    master: str = "local[2]",
    app_name: str = "catalog-es",
    jars_dir: Path | None = None,
    token: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A SparkSession whose default catalog `catalog` is catalog-es at `uri`, warehouse `warehouse`.

    The offline classpath comes from `spark_jars(jars_dir)` (assembled on first use); `token` is sent as a bearer
    token; `conf` adds or overrides keys.
    """
    from pyspark.sql import SparkSession  # noqa: PLC0415 - pyspark is an optional extra, loaded on demand

    settings = {
        **LOCAL_SPARK,
        **catalog_conf(uri, warehouse, catalog=catalog, jars=spark_jars(jars_dir), default_catalog=True, token=token),
        **(conf or {}),
    }
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
