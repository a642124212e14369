"""The Spark configuration that wires an Iceberg REST catalog named `catalog` to catalog-es."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

StorageType = Literal["file", "s3", "adls", "gcs"]

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SPARK_CATALOG = "org.apache.iceberg.spark.SparkCatalog"
# Local-filesystem warehouses; Spark spells paths `file:/…`, which catalog-es accepts as `file:///…`.
HADOOP_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO"
ICEBERG_VERSION = "1.10.2"
# Per warehouse storage: Iceberg's own FileIO, the access it asks the catalog for (X-Iceberg-Access-Delegation:
# S3 gets STS credentials where the warehouse has STS on, else remote signing; ADLS a SAS token, GCS an OAuth
# token) and the Maven bundle that carries the FileIO's cloud SDK (the offline classpath has none of them).
FILE_IO: dict[StorageType, str] = {
    "file": HADOOP_FILE_IO,
    "s3": "org.apache.iceberg.aws.s3.S3FileIO",
    "adls": "org.apache.iceberg.azure.adlsv2.ADLSFileIO",
    "gcs": "org.apache.iceberg.gcp.gcs.GCSFileIO",
}
ACCESS_DELEGATION: dict[StorageType, str] = {
    "s3": "vended-credentials,remote-signing",
    "adls": "vended-credentials",
    "gcs": "vended-credentials",
}
CLOUD_BUNDLE: dict[StorageType, str] = {
    "s3": f"org.apache.iceberg:iceberg-aws-bundle:{ICEBERG_VERSION}",
    "adls": f"org.apache.iceberg:iceberg-azure-bundle:{ICEBERG_VERSION}",
    "gcs": f"org.apache.iceberg:iceberg-gcp-bundle:{ICEBERG_VERSION}",
}


def catalog_conf(
    uri: str,
    warehouse: str,
    *,
    catalog: str = "catalog_es",
    jars: Sequence[Path] = (),
    default_catalog: bool = False,
    token: str | None = None,
    storage: StorageType = "file",
) -> dict[str, str]:
    """Spark conf keys for a SparkCatalog of type `rest` on `uri` (ending in `/catalog`) and `warehouse`.

    `storage` is the warehouse's storage type: it picks the FileIO and, for object stores, asks the catalog
    for delegated access (the table's `config` then carries the endpoint, region, credentials or signer).
    A `token` is sent as a bearer header (Iceberg's `token` option would also start its OAuth2 flow).
    """
    prefix = f"spark.sql.catalog.{catalog}"
    conf = {
        "spark.sql.extensions": ICEBERG_EXTENSIONS,
        prefix: SPARK_CATALOG,
        f"{prefix}.type": "rest",
        f"{prefix}.uri": uri,
        f"{prefix}.warehouse": warehouse,
        f"{prefix}.io-impl": FILE_IO[storage],
    }
    if storage in ACCESS_DELEGATION:
        conf[f"{prefix}.header.X-Iceberg-Access-Delegation"] = ACCESS_DELEGATION[storage]
    if token:
        conf[f"{prefix}.header.Authorization"] = f"Bearer {token}"
    if default_catalog:
        conf["spark.sql.defaultCatalog"] = catalog
    if jars:
        conf["spark.jars"] = ",".join(str(jar) for jar in jars)
    return conf
