"""Spark 3.5 with a service principal's `credential=` against `serve --secure` (issue 32): Iceberg's Java client
fetches its token from the catalog's own `/v1/oauth/tokens`, and grants decide what each principal may do."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import psycopg
import pytest

from catalog_es.spark.conf import HADOOP_FILE_IO, SPARK_CATALOG
from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, eventually, start_catalog, stop_catalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

_CREDENTIAL = re.compile(r"catalog_es\.credential=([0-9a-f-]{36}:[A-Za-z0-9_-]+)")


@pytest.fixture(scope="module")
def secure(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningCatalog, str]]:
    """`serve --secure` on a database of its own; the admin credential it printed."""
    work: Path = tmp_path_factory.mktemp("spark-principals")
    with new_database(pg_admin_dsn, "spark_sp") as dsn:
        env = {
            **os.environ,
            "CATALOG_ES__PG_DSN": dsn,
            "CATALOG_ES__NATS__ENABLED": "false",
            "CATALOG_ES__SECRETS_KEY": generate_secrets_key(),
        }
        running = start_catalog(work / "data", env, args=["--secure"])
        assert running.log_path is not None
        log = eventually(lambda: running.log_path.read_text() if "credential=" in running.log_path.read_text() else "")
        found = _CREDENTIAL.search(log)
        assert found, log
        yield running, found.group(1)
        stop_catalog(running)


def _register(spark: SparkSession, catalog: str, running: RunningCatalog, credential: str) -> None:
    prefix = f"spark.sql.catalog.{catalog}"
    settings = {
        prefix: SPARK_CATALOG,
        f"{prefix}.type": "rest",
        f"{prefix}.uri": running.catalog_uri,
        f"{prefix}.warehouse": "demo",
        f"{prefix}.io-impl": HADOOP_FILE_IO,
        f"{prefix}.credential": credential,
        f"{prefix}.oauth2-server-uri": f"{running.catalog_uri}/v1/oauth/tokens",
        f"{prefix}.scope": "catalog",
    }
    for key, value in settings.items():
        spark.conf.set(key, value)


def _management(running: RunningCatalog, credential: str) -> httpx.Client:
    client_id, secret = credential.split(":", 1)
    form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
    token = httpx.post(f"{running.catalog_uri}/v1/oauth/tokens", data=form).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.Client(base_url=f"{running.base_url}/management/v1", headers=headers, timeout=30)


def test_spark_principals_are_authorised_by_grants(spark: SparkSession, secure: tuple[RunningCatalog, str]) -> None:
    running, admin_credential = secure
    _register(spark, "sp_admin", running, admin_credential)
    spark.sql("CREATE NAMESPACE sp_admin.sp")
    spark.sql("CREATE TABLE sp_admin.sp.t (id bigint) USING iceberg")
    spark.sql("INSERT INTO sp_admin.sp.t VALUES (1), (2), (3)")
    with _management(running, admin_credential) as admin:
        reader = admin.post("/service-principal", json={"name": "spark-reader"}).json()
        with psycopg.connect(running.env["CATALOG_ES__PG_DSN"]) as conn:
            row = conn.execute("SELECT id, warehouse_id FROM tables WHERE name = 't'").fetchone()
        assert row is not None
        body = {"writes": [{"type": "select", "user": reader["user-id"]}], "deletes": []}
        granted = admin.post(f"/permissions/warehouse/{row[1]}/table/{row[0]}/assignments", json=body)
        assert granted.status_code == 204, granted.text
    _register(spark, "sp_reader", running, reader["credential"])
    assert spark.sql("SELECT count(*) FROM sp_reader.sp.t").collect()[0][0] == 3
    with pytest.raises(Exception, match=r"Forbidden|403|Not allowed"):
        spark.sql("INSERT INTO sp_reader.sp.t VALUES (4)").collect()
    with psycopg.connect(running.env["CATALOG_ES__PG_DSN"]) as conn:
        actors = {
            row[0]
            for row in conn.execute(
                "SELECT extensions->>'actor' FROM catalog_events WHERE type LIKE 'io.catalog-es.table.%%'"
            ).fetchall()
        }
    assert actors == {f"principal~{admin_credential.split(':', 1)[0]}"}
