"""GCS warehouses end to end on gcp-storage-emulator: the catalog writes metadata over the JSON API with its own
service-account JWT, pyiceberg (pyarrow) creates, appends, reads and purges a table, the key stays out of the log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, eventually, start_catalog, stop_catalog
from tests.integration.store_emulators import GcsEmulator, service_account_key


@pytest.fixture(scope="module")
def gcs_catalog(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCatalog]:
    """One server for the module, on a database of its own."""
    with new_database(pg_admin_dsn) as dsn:
        env = {**os.environ, "CATALOG_ES__PG_DSN": dsn, "CATALOG_ES__SECRETS_KEY": generate_secrets_key()}
        running = start_catalog(tmp_path_factory.mktemp("gcs") / "data", env)
        yield running
        stop_catalog(running)


def test_pyiceberg_round_trip_on_a_gcs_warehouse(gcs_catalog: RunningCatalog, gcs_emulator: GcsEmulator) -> None:
    bucket, key = gcs_emulator.make_bucket(), service_account_key()
    body = {
        "warehouse-name": "google",
        "storage-profile": {"type": "gcs", "bucket": bucket, "key-prefix": "lake", "endpoint": gcs_emulator.endpoint},
        "storage-credential": {"type": "gcs", "credential-type": "service-account-key", "key": key},
    }
    created = httpx.post(f"{gcs_catalog.base_url}/management/v1/warehouse", json=body, timeout=60)
    assert created.status_code == 201, created.text
    assert gcs_emulator.objects(bucket) == []  # the access probe cleaned up after itself

    # The emulator checks no token; the client brings one of its own (gcs.service.host comes from the catalog).
    expires = int((datetime.now(UTC) + timedelta(hours=1)).timestamp() * 1000)
    catalog = load_catalog(
        "google",
        type="rest",
        uri=gcs_catalog.catalog_uri,
        warehouse="google",
        **{"gcs.oauth2.token": "client-token", "gcs.oauth2.token-expires-at": str(expires)},
    )
    catalog.create_namespace("sales")
    table = catalog.create_table("sales.orders", schema=pa.schema([("id", pa.int64()), ("item", pa.string())]))
    assert table.location().startswith(f"gs://{bucket}/lake/")
    assert table.io.properties["gcs.service.host"] == gcs_emulator.endpoint
    table.append(pa.table({"id": [1, 2, 3], "item": ["a", "b", "c"]}))
    read_back = catalog.load_table("sales.orders").scan().to_arrow().sort_by("id")
    assert read_back.column("item").to_pylist() == ["a", "b", "c"]

    table_prefix = table.location().removeprefix(f"gs://{bucket}/") + "/"
    names = gcs_emulator.objects(bucket, table_prefix)
    assert any(name.endswith(".metadata.json") for name in names)
    assert any(name.endswith(".parquet") for name in names)
    catalog.drop_table("sales.orders", purge_requested=True)
    assert eventually(lambda: gcs_emulator.objects(bucket, table_prefix) == [])  # purged by the task worker

    with psycopg.connect(gcs_catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        rows = conn.execute("SELECT data::text, extensions::text FROM catalog_events").fetchall()
    secret_line = key["private_key"].splitlines()[1]
    assert secret_line not in "\n".join(f"{data}{extensions}" for data, extensions in rows)
