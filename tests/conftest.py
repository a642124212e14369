"""Shared fixtures: a real PostgreSQL (embedded by default, or CATALOG_ES_TEST_PG_DSN) and fresh databases."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.runtime.embedded_postgres import embedded_dsn
from tests.databases import new_database

# The image lane's background build: hooks of the whole run (the xdist controller loads only this conftest).
from tests.deploy.image_build import (  # noqa: F401
    pytest_collection_finish,
    pytest_configure,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_xdist_node_collection_finished,
)

# The controller's scheduler for `--dist loadfile`: slow files first, each JVM suite on one worker.
from tests.scheduling import pytest_xdist_make_scheduler  # noqa: F401

# No test, and no server a test starts (they inherit this environment), may reach a cloud identity:
# no instance-metadata service, no ambient credentials (DEVELOPERS.md "Loopback only").
NO_AMBIENT_CLOUD_IDENTITY = {
    "AWS_EC2_METADATA_DISABLED": "true",
    "NO_GCE_CHECK": "True",
    "GCE_METADATA_HOST": "127.0.0.1:9",
}
AMBIENT_CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_TENANT_ID",
    "IDENTITY_ENDPOINT",
    "MSI_ENDPOINT",
)
os.environ.update(NO_AMBIENT_CLOUD_IDENTITY)
for _name in AMBIENT_CREDENTIAL_VARIABLES:
    os.environ.pop(_name, None)


@pytest.fixture(scope="session")
def pg_admin_dsn(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PostgreSQL server for the whole run: the one named by CATALOG_ES_TEST_PG_DSN, else an embedded one."""
    external = os.environ.get("CATALOG_ES_TEST_PG_DSN")
    if external:
        return external
    return embedded_dsn(tmp_path_factory.mktemp("embedded"))


@pytest.fixture
def pg_dsn(pg_admin_dsn: str) -> Iterator[str]:
    """A new, empty database for one test, dropped afterwards."""
    with new_database(pg_admin_dsn) as dsn:
        yield dsn


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"
