"""The Spark configuration that wires an Iceberg REST catalog named `catalog` to catalog-es."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
# Local-filesystem warehouses; Spark spells paths `file:/…`, which catalog-es accepts as `file:///…`.
HADOOP_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO"


def catalog_conf(
    uri: str,
    warehouse: str,
    *,
    catalog: str = "catalog_es",
    jars: Sequence[Path] = (),
    default_catalog: bool = False,
    token: str | None = None,
) -> dict[str, str]:
    """Spark conf keys for a SparkCatalog of type `rest` on `uri` (ending in `/catalog`) and `warehouse`.

    A `token` is sent as a bearer header (Iceberg's `token` option would also start its OAuth2 flow).
    """
    prefix = f"spark.sql.catalog.{catalog}"
    conf = {
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        prefix: SPARK_CATALOG,
        f"{prefix}.type": "rest",
        f"{prefix}.uri": uri,
        f"{prefix}.warehouse": warehouse,
        f"{prefix}.io-impl": HADOOP_FILE_IO,
    }
    if token:
        conf[f"{prefix}.header.Authorization"] = f"Bearer {token}"
    if default_catalog:
        conf["spark.sql.defaultCatalog"] = catalog
    if jars:
        conf["spark.jars"] = ",".join(str(jar) for jar in jars)
    return conf
