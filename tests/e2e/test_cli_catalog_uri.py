"""The operator CLI talks to the server of its data dir: `serve` records where it listens, or the CLI refuses."""

from __future__ import annotations

import subprocess
from urllib.parse import urlsplit

import msgspec
import pytest

from api.runtime.serving_record import RECORD_NAME, ServingRecord
from api.settings import Settings
from tests.e2e.conftest import RunningCatalog, free_port, run_cli, stop_catalog

pytestmark = pytest.mark.e2e


def _maintenance_once(catalog: RunningCatalog, *options: str) -> subprocess.CompletedProcess[str]:
    return run_cli(
        ["maintenance", "run", "--once", "--data-dir", str(catalog.data_dir), *options], catalog.env, timeout=120
    )


def test_serve_records_its_uri_in_the_data_dir_while_it_runs_when_not_on_the_default_port(
    catalog: RunningCatalog,
) -> None:
    record = msgspec.json.decode((catalog.data_dir / RECORD_NAME).read_bytes(), type=ServingRecord)
    assert record == ServingRecord(catalog_uri=catalog.catalog_uri, pid=catalog.process.pid)
    assert urlsplit(catalog.catalog_uri).port != Settings().port  # recorded, not the default guessed

    stop_catalog(catalog)
    assert not (catalog.data_dir / RECORD_NAME).exists()


def test_maintenance_refuses_naming_catalog_uri_when_no_server_runs_on_its_data_dir(catalog: RunningCatalog) -> None:
    stop_catalog(catalog)

    refused = _maintenance_once(catalog)

    assert refused.returncode == 1, refused.stderr
    assert "--catalog-uri" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert "Spark session" not in refused.stderr  # refused before a session or a job


def test_maintenance_refuses_when_nothing_answers_at_the_given_catalog_uri(catalog: RunningCatalog) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/catalog"

    refused = _maintenance_once(catalog, "--catalog-uri", nowhere)

    assert refused.returncode == 1, refused.stderr
    assert f"no catalog answers at {nowhere}" in refused.stderr
