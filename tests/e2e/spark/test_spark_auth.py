"""Spark against a catalog that requires OAuth2 tokens: the Iceberg REST client gets them from a real OpenID
provider with client credentials (`credential`, `oauth2-server-uri`), as it would from Keycloak."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest

from catalog_es.spark.conf import HADOOP_FILE_IO, SPARK_CATALOG
from tests.databases import new_database
from tests.e2e.auth.conftest import CLIENTS
from tests.e2e.auth.openid_provider import AUDIENCE, OpenIdProvider
from tests.e2e.conftest import RunningCatalog, free_port, start_catalog, stop_catalog

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


@pytest.fixture(scope="module")
def secured(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningCatalog, str]]:
    """An OpenID provider and a catalog-es requiring its tokens (allowall), on a database of its own."""
    work: Path = tmp_path_factory.mktemp("spark-auth")
    idp = OpenIdProvider(work, free_port(), CLIENTS)
    idp.start()
    with new_database(pg_admin_dsn, "spark_auth") as dsn:
        env = {
            **os.environ,
            "CATALOG_ES__PG_DSN": dsn,
            "CATALOG_ES__NATS__ENABLED": "false",
            "CATALOG_ES__OPENID_PROVIDER_URI": idp.issuer,
            "CATALOG_ES__OPENID_AUDIENCE": AUDIENCE,
        }
        running = start_catalog(work / "data", env)
        yield running, idp.token_endpoint
        stop_catalog(running)
        idp.stop()


def _register(spark: SparkSession, catalog: str, running: RunningCatalog, extra: dict[str, str]) -> None:
    prefix = f"spark.sql.catalog.{catalog}"
    settings = {
        prefix: SPARK_CATALOG,
        f"{prefix}.type": "rest",
        f"{prefix}.uri": running.catalog_uri,
        f"{prefix}.warehouse": "demo",
        f"{prefix}.io-impl": HADOOP_FILE_IO,
        **{f"{prefix}.{key}": value for key, value in extra.items()},
    }
    for key, value in settings.items():
        spark.conf.set(key, value)


def test_spark_writes_with_client_credentials_and_is_refused_without_when_tokens_are_required(
    spark: SparkSession, secured: tuple[RunningCatalog, str]
) -> None:
    running, token_endpoint = secured
    secret, _ = CLIENTS["alice"]
    _register(
        spark,
        "secured",
        running,
        {"credential": f"alice:{secret}", "oauth2-server-uri": token_endpoint, "scope": "catalog"},
    )
    spark.sql("CREATE NAMESPACE secured.spark_auth")
    spark.sql("CREATE TABLE secured.spark_auth.t (id bigint) USING iceberg")
    spark.sql("INSERT INTO secured.spark_auth.t VALUES (1), (2), (3)")
    assert spark.sql("SELECT count(*) FROM secured.spark_auth.t").collect()[0][0] == 3
    with psycopg.connect(running.env["CATALOG_ES__PG_DSN"]) as conn:
        actors = {
            row[0]
            for row in conn.execute(
                "SELECT extensions->>'actor' FROM catalog_events WHERE type LIKE 'io.catalog-es.table.%%'"
            ).fetchall()
        }
    assert actors == {"oidc~alice"}

    _register(spark, "anonymous", running, {})
    with pytest.raises(Exception, match=r"NotAuthorized|401|Not authorized"):
        spark.sql("SHOW NAMESPACES IN anonymous").collect()
