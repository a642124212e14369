"""`catalog-es spark conf`: the Spark conf for the configured catalog, as properties or spark-submit arguments."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from api.cli import cli
from catalog_es.spark import catalog_conf

RUNNER = CliRunner()


def test_spark_conf_names_the_catalog_on_the_configured_host_port_and_default_warehouse() -> None:
    env = {"CATALOG_ES__HOST": "10.1.2.3", "CATALOG_ES__PORT": "9191", "CATALOG_ES__DEFAULT_WAREHOUSE": "lake"}

    result = RUNNER.invoke(cli, ["spark", "conf", "--catalog", "lakehouse", "--storage", "file"], env=env)

    assert result.exit_code == 0, result.output
    assert dict(line.split("=", 1) for line in result.stdout.splitlines()) == {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.lakehouse": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lakehouse.type": "rest",
        "spark.sql.catalog.lakehouse.uri": "http://10.1.2.3:9191/catalog",
        "spark.sql.catalog.lakehouse.warehouse": "lake",
        "spark.sql.catalog.lakehouse.io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
    }


def test_spark_conf_prints_spark_submit_arguments_when_asked() -> None:
    result = RUNNER.invoke(
        cli, ["spark", "conf", "--format", "submit", "--warehouse", "sales", "--port", "8282", "--storage", "file"]
    )

    assert result.exit_code == 0, result.output
    arguments = result.stdout.split()
    assert arguments[::2] == ["--conf"] * 6
    assert "spark.sql.catalog.catalog_es.uri=http://127.0.0.1:8282/catalog" in arguments
    assert "spark.sql.catalog.catalog_es.warehouse=sales" in arguments


def test_catalog_conf_adds_jars_default_catalog_and_token_only_when_given() -> None:
    plain = catalog_conf("http://h/catalog", "w")
    full = catalog_conf(
        "http://h/catalog", "w", catalog="c", jars=[Path("/a.jar"), Path("/b.jar")], default_catalog=True, token="t0k"
    )

    assert "spark.jars" not in plain
    assert "spark.sql.defaultCatalog" not in plain
    assert full["spark.jars"] == "/a.jar,/b.jar"
    assert full["spark.sql.defaultCatalog"] == "c"
    assert full["spark.sql.catalog.c.header.Authorization"] == "Bearer t0k"
    assert not any("Authorization" in key for key in plain)


def test_spark_conf_for_an_s3_warehouse_names_s3_file_io_the_delegation_header_and_the_aws_bundle() -> None:
    result = RUNNER.invoke(cli, ["spark", "conf", "--warehouse", "lake", "--storage", "s3"])

    assert result.exit_code == 0, result.output
    conf = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert conf["spark.sql.catalog.catalog_es.io-impl"] == "org.apache.iceberg.aws.s3.S3FileIO"
    assert (
        conf["spark.sql.catalog.catalog_es.header.X-Iceberg-Access-Delegation"] == "vended-credentials,remote-signing"
    )
    assert conf["spark.jars.packages"].split(",") == [
        "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2",
        "org.apache.iceberg:iceberg-aws-bundle:1.10.2",
    ]


def test_catalog_conf_picks_each_storage_s_file_io_and_asks_object_stores_for_delegated_access() -> None:
    io = {kind: catalog_conf("http://h/catalog", "w", storage=kind) for kind in ("file", "s3", "adls", "gcs")}
    key, header = (
        "spark.sql.catalog.catalog_es.io-impl",
        "spark.sql.catalog.catalog_es.header.X-Iceberg-Access-Delegation",
    )

    assert {kind: conf[key] for kind, conf in io.items()} == {
        "file": "org.apache.iceberg.hadoop.HadoopFileIO",
        "s3": "org.apache.iceberg.aws.s3.S3FileIO",
        "adls": "org.apache.iceberg.azure.adlsv2.ADLSFileIO",
        "gcs": "org.apache.iceberg.gcp.gcs.GCSFileIO",
    }
    assert header not in io["file"]
    assert io["adls"][header] == io["gcs"][header] == "vended-credentials"


def test_spark_conf_without_a_storage_and_without_a_reachable_catalog_says_to_pass_one() -> None:
    result = RUNNER.invoke(cli, ["spark", "conf", "--port", "1"])  # loopback, nothing listens on port 1

    assert result.exit_code == 1
    assert "pass --storage" in result.stderr
