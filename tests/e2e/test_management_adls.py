"""ADLS Gen2 warehouses end to end on Azurite: the catalog writes metadata over the Blob API, pyiceberg (adlfs)
creates, appends, reads and purges a table, and the account key never reaches the event log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import parse_qs

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog

from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, eventually, start_catalog, stop_catalog
from tests.integration.store_emulators import Azurite


@pytest.fixture(scope="module")
def adls_catalog(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningCatalog]:
    """One server for the module, on a database of its own."""
    with new_database(pg_admin_dsn) as dsn:
        env = {**os.environ, "CATALOG_ES__PG_DSN": dsn, "CATALOG_ES__SECRETS_KEY": generate_secrets_key()}
        running = start_catalog(tmp_path_factory.mktemp("adls") / "data", env)
        yield running
        stop_catalog(running)


def _create(
    base_url: str, name: str, azurite: Azurite, filesystem: str, key: str, *, sas: bool = False
) -> httpx.Response:
    """A warehouse on Azurite; `sas`: vend directory SAS tokens (Azurite refuses them, so clients keep keys)."""
    body = {
        "warehouse-name": name,
        "storage-profile": {
            "type": "adls",
            "account-name": azurite.account,
            "filesystem": filesystem,
            "key-prefix": "lake",
            "endpoint": azurite.endpoint,
            "sas-enabled": sas,
        },
        "storage-credential": {"type": "az", "credential-type": "shared-access-key", "key": key},
    }
    return httpx.post(f"{base_url}/management/v1/warehouse", json=body, timeout=60)


def test_pyiceberg_round_trip_on_an_adls_warehouse(adls_catalog: RunningCatalog, azurite: Azurite) -> None:
    filesystem = azurite.make_filesystem()
    created = _create(adls_catalog.base_url, "azure", azurite, filesystem, azurite.key)
    assert created.status_code == 201, created.text
    assert azurite.blobs(filesystem) == []  # the access probe cleaned up after itself

    connection = (
        f"DefaultEndpointsProtocol=http;AccountName={azurite.account};AccountKey={azurite.key};"
        f"BlobEndpoint={azurite.endpoint};"
    )
    catalog = load_catalog(
        "azure",
        type="rest",
        uri=adls_catalog.catalog_uri,
        warehouse="azure",
        **{
            "adls.connection-string": connection,
            "adls.account-name": azurite.account,
        },
    )
    catalog.create_namespace("sales")
    table = catalog.create_table("sales.orders", schema=pa.schema([("id", pa.int64()), ("item", pa.string())]))
    assert table.location().startswith(f"abfss://{filesystem}@{azurite.account}.dfs.core.windows.net/lake/")
    table.append(pa.table({"id": [1, 2, 3], "item": ["a", "b", "c"]}))
    read_back = catalog.load_table("sales.orders").scan().to_arrow().sort_by("id")
    assert read_back.column("id").to_pylist() == [1, 2, 3]
    assert read_back.column("item").to_pylist() == ["a", "b", "c"]

    blobs = azurite.blobs(filesystem)
    assert all(name.startswith("lake/") for name in blobs)
    assert any(name.endswith(".metadata.json") for name in blobs)
    assert any(name.endswith(".parquet") for name in blobs)

    table_prefix = table.location().split(".net/", 1)[1] + "/"
    assert len(azurite.blobs(filesystem, table_prefix)) >= 4  # metadata files, manifest list, manifest, data
    catalog.drop_table("sales.orders", purge_requested=True)
    assert eventually(lambda: azurite.blobs(filesystem, table_prefix) == [])  # purged by the task worker

    with psycopg.connect(adls_catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        rows = conn.execute("SELECT data::text, extensions::text FROM catalog_events").fetchall()
    assert azurite.key not in "\n".join(f"{data}{extensions}" for data, extensions in rows)


def test_a_sas_enabled_warehouse_vends_a_directory_sas_for_the_table_and_never_its_key(
    adls_catalog: RunningCatalog, azurite: Azurite
) -> None:
    filesystem = azurite.make_filesystem()
    assert _create(adls_catalog.base_url, "azure_sas", azurite, filesystem, azurite.key, sas=True).status_code == 201
    base = f"{adls_catalog.catalog_uri}/v1"
    prefix = httpx.get(f"{base}/config", params={"warehouse": "azure_sas"}).json()["defaults"]["prefix"]
    assert httpx.post(f"{base}/{prefix}/namespaces", json={"namespace": ["s"]}).status_code == 200
    schema = {"type": "struct", "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    vended = {"X-Iceberg-Access-Delegation": "vended-credentials"}
    created = httpx.post(f"{base}/{prefix}/namespaces/s/tables", json={"name": "t", "schema": schema}, headers=vended)
    assert created.status_code == 200, created.text
    loaded = httpx.get(f"{base}/{prefix}/namespaces/s/tables/t", headers=vended).json()
    plain = httpx.get(f"{base}/{prefix}/namespaces/s/tables/t").json()

    sas_key = f"adls.sas-token.{azurite.account}.dfs.core.windows.net"
    location = loaded["metadata"]["location"]
    (credential,) = loaded["storage-credentials"]
    assert credential["prefix"] == location
    token = parse_qs(credential["config"][sas_key])
    assert token["sr"] == ["d"]  # a directory SAS: the table's directory, nothing above it
    assert token["sp"] == ["racwdl"]  # the anonymous caller may modify here (no authorizer in this server)
    assert loaded["config"][sas_key] == credential["config"][sas_key]
    assert sas_key not in plain["config"]  # nothing vended unless asked
    assert azurite.key not in created.text + str(loaded)
    refreshed = httpx.get(f"{base}/{prefix}/namespaces/s/tables/t/credentials").json()
    assert sas_key in refreshed["storage-credentials"][0]["config"]


def test_adls_warehouse_is_refused_when_the_key_is_wrong(adls_catalog: RunningCatalog, azurite: Azurite) -> None:
    filesystem = azurite.make_filesystem()
    refused = _create(adls_catalog.base_url, "wrong-key", azurite, filesystem, "d3Jvbmcta2V5")
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["type"] == "BadRequestException"
    assert "HTTP 403" in error["message"]
    assert azurite.key not in refused.text
