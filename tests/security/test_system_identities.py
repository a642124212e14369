"""The server's own cloud identity (issue 27, item 3): off unless the operator enables it, and then only for a
server admin or operator; refused at once, before any storage client exists."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.auth.conftest import bootstrapped, catalog_server
from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog, stop_catalog
from tests.e2e.rest_helpers import assert_error
from tests.security.isolated_server import IsolatedCatalog
from tests.security.test_storage_confinement import Catalog, _http, project_b

pytestmark = pytest.mark.e2e

ADLS = {"type": "adls", "account-name": "lakeaccount", "filesystem": "lake"}
GCS = {"type": "gcs", "bucket": "lake-bucket"}
S3 = {"type": "s3", "bucket": "lake-bucket", "region": "us-east-1"}
AZURE_IDENTITY = {"type": "az", "credential-type": "azure-system-identity"}
GCP_IDENTITY = {"type": "gcs", "credential-type": "gcp-system-identity"}
__all__ = ["project_b"]  # the fixture, used here with this module's `admin`


def _warehouse(name: str, profile: dict[str, Any], credential: dict[str, Any]) -> dict[str, Any]:
    return {"warehouse-name": name, "storage-profile": profile, "storage-credential": credential}


def test_system_identities_are_refused_at_once_and_nothing_leaves_the_server_when_not_enabled(
    isolated_catalog: IsolatedCatalog,
) -> None:
    before = isolated_catalog.attempts_outside()
    with isolated_catalog.client() as http:
        for name, profile, credential, setting in [
            ("azure", ADLS, AZURE_IDENTITY, "CATALOG_ES__ENABLE_AZURE_SYSTEM_CREDENTIALS"),
            ("gcp", GCS, GCP_IDENTITY, "CATALOG_ES__ENABLE_GCP_SYSTEM_CREDENTIALS"),
            ("aws", S3, {"type": "s3", "credential-type": "aws-system-identity"}, "ENABLE_AWS_SYSTEM_CREDENTIALS"),
        ]:
            started = time.monotonic()
            response = http.post("/management/v1/warehouse", json=_warehouse(name, profile, credential))
            assert setting in assert_error(response, 400, "BadRequestException")
            assert time.monotonic() - started < 5
    assert isolated_catalog.attempts_outside() == before


@pytest.fixture
def admin(pg_dsn: str, tmp_path: Path, idp: OpenIdProvider) -> Iterator[Catalog]:
    """Builtin authorization, with the operator's switch on for Azure only."""
    server = catalog_server(pg_dsn, tmp_path, idp, "builtin", CATALOG_ES__ENABLE_AZURE_SYSTEM_CREDENTIALS="true")
    running: RunningCatalog = bootstrapped(server, idp)
    catalog = Catalog(running, idp)
    yield catalog
    catalog.rest.close()
    catalog.management.close()
    stop_catalog(running)


def test_a_project_admin_cannot_give_a_warehouse_the_servers_identity_even_when_enabled(
    admin: Catalog, project_b: str
) -> None:
    with _http(admin.server, admin.idp, "alice", "/management/v1") as alice:
        project = {"x-project-id": project_b}
        created = alice.post("/warehouse", json=_warehouse("mine", ADLS, AZURE_IDENTITY), headers=project)
        assert "server admin or operator" in assert_error(created, 403, "ForbiddenException")
        not_enabled = alice.post("/warehouse", json=_warehouse("g", GCS, GCP_IDENTITY), headers=project)
        assert "CATALOG_ES__ENABLE_GCP_SYSTEM_CREDENTIALS" in assert_error(not_enabled, 400, "BadRequestException")
        listed = alice.get("/warehouse", headers=project)
        assert listed.json()["warehouses"] == []
