"""`audit export` into an S3 warehouse whose credential is kept in the secrets store (built by the composition root)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import cli
from api.container import open_services
from api.runtime.database import bootstrap
from api.settings import load_settings
from catalog_es.identifiers import NIL_PROJECT_ID
from catalog_es.store.eventstore import EventMetadata
from catalog_es.store.secrets import generate_secrets_key
from commands.warehouses import CreateWarehouse, handle_create_warehouse
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket, object_keys


def test_audit_export_writes_to_an_s3_warehouse_with_a_stored_credential(
    migrated_dsn: str, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CATALOG_ES__DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CATALOG_ES__PG_DSN", migrated_dsn)
    monkeypatch.setenv("CATALOG_ES__SECRETS_KEY", generate_secrets_key())
    monkeypatch.setenv("CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS", "127.0.0.1")
    bucket = make_bucket(s3_endpoint)
    profile = {
        "type": "s3",
        "bucket": bucket,
        "key-prefix": "lake",
        "region": REGION,
        "endpoint": s3_endpoint,
        "path-style-access": True,
        "flavor": "s3-compat",
    }
    credential = {
        "type": "s3",
        "credential-type": "access-key",
        "access-key-id": ACCESS_KEY_ID,
        "secret-access-key": SECRET_ACCESS_KEY,
    }

    async def create() -> None:
        settings = load_settings()
        await bootstrap(migrated_dsn, settings)  # the default project
        async with open_services(settings, migrated_dsn) as services:
            command = CreateWarehouse(
                project_id=NIL_PROJECT_ID,
                name="lake",
                storage_profile=profile,
                storage_credential=credential,
                metadata=EventMetadata(actor="tester"),
            )
            await handle_create_warehouse(command, services.ctx)

    asyncio.run(create())

    result = CliRunner().invoke(cli, ["audit", "export", "--warehouse", "lake", "--json"])

    assert result.exit_code == 0, result.output
    exported = json.loads(result.stdout)
    assert exported["table"] == "lake.audit.catalog_events"
    assert exported["exported"] >= 1
    keys = object_keys(s3_endpoint, bucket, "lake/")
    assert any(key.endswith(".parquet") for key in keys), keys  # the data went to the warehouse's own bucket
