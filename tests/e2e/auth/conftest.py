"""Fixtures: a real OpenID provider and a catalog-es server that trusts it (allowall or builtin authz), per test or
one for a module's tests (each test then acting on warehouses, projects and roles of its own)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.auth.openid_provider import AUDIENCE, OpenIdProvider
from tests.e2e.conftest import RunningCatalog, free_port, start_catalog, stop_catalog
from tests.integration.s3_iam_server import iam_s3  # noqa: F401 - moto with IAM enforcement (remote signing tests)

CLIENTS = {
    "admin": ("admin-secret", ["catalog-admins"]),
    "alice": ("alice-secret", []),
    "bob": ("bob-secret", []),
    "carol": ("carol-secret", ["Readers"]),  # the roles claim names a role (matched case-insensitively)
}


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIdProvider]:
    """One provider for a module's tests (a node process and a new RSA key cost ~0.6 s of CPU): it keeps no state
    a test sees beyond its clients and keys, and a module that restarts it or rotates its keys overrides this
    fixture with a function-scoped one (test_authentication.py)."""
    provider = OpenIdProvider(tmp_path_factory.mktemp("oidc"), free_port(), CLIENTS)
    provider.start()
    yield provider
    provider.stop()


def catalog_server(
    pg_dsn: str, tmp_path: Path, idp: OpenIdProvider, backend: str, port: int | None = None, **more: str
) -> RunningCatalog:
    env = {
        **more,
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__NATS__ENABLED": "false",
        "CATALOG_ES__OPENID_PROVIDER_URI": idp.issuer,
        "CATALOG_ES__OPENID_AUDIENCE": AUDIENCE,
        "CATALOG_ES__OPENID_ROLES_CLAIM": "roles",
        "CATALOG_ES__AUTHZ__BACKEND": backend,
    }
    return start_catalog(tmp_path / "data", env, port)


@pytest.fixture
def secured_catalog(pg_dsn: str, tmp_path: Path, idp: OpenIdProvider) -> Iterator[RunningCatalog]:
    """Authentication on, every authenticated caller allowed (authz `allowall`)."""
    running = catalog_server(pg_dsn, tmp_path, idp, "allowall")
    yield running
    stop_catalog(running)


@pytest.fixture
def authz_catalog(pg_dsn: str, tmp_path: Path, idp: OpenIdProvider) -> Iterator[RunningCatalog]:
    """Authentication on, builtin authorization, bootstrapped by the `admin` client (the server admin)."""
    running = bootstrapped(catalog_server(pg_dsn, tmp_path, idp, "builtin"), idp)
    yield running
    stop_catalog(running)


def bootstrapped(running: RunningCatalog, idp: OpenIdProvider) -> RunningCatalog:
    """The `admin` client bootstraps the server: it becomes the server admin."""
    response = httpx.post(
        f"{running.base_url}/management/v1/bootstrap",
        json={"accept-terms-of-use": True, "user-name": "The Admin", "user-email": "admin@example.com"},
        headers={"Authorization": f"Bearer {idp.token('admin')}"},
        timeout=30,
    )
    assert response.status_code == 204, response.text
    return running


@contextmanager
def shared_authz_server(
    pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory, idp: OpenIdProvider, **more: str
) -> Iterator[RunningCatalog]:
    """OIDC + builtin authorization, bootstrapped by `admin`, on a new database; file warehouses may lie anywhere
    under the run's temporary directory (each test's `tmp_path` included), as a per-test server allows under its
    test's."""
    roots = str(tmp_path_factory.getbasetemp())
    with new_database(pg_admin_dsn, "m") as dsn:
        directory = tmp_path_factory.mktemp("authz-server")
        running = catalog_server(dsn, directory, idp, "builtin", CATALOG_ES__FILE_STORAGE_ROOTS=roots, **more)
        try:
            yield bootstrapped(running, idp)
        finally:
            stop_catalog(running)


@pytest.fixture(scope="module")
def module_authz_catalog(
    pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory, idp: OpenIdProvider
) -> Iterator[RunningCatalog]:
    """As `authz_catalog`, one for the module's tests."""
    with shared_authz_server(pg_admin_dsn, tmp_path_factory, idp) as running:
        yield running


@pytest.fixture(scope="module")
def module_keyed_authz_catalog(
    pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory, idp: OpenIdProvider
) -> Iterator[RunningCatalog]:
    """As `module_authz_catalog`, with a secrets key (so that S3 warehouses can hold credentials)."""
    key = generate_secrets_key()
    with shared_authz_server(pg_admin_dsn, tmp_path_factory, idp, CATALOG_ES__SECRETS_KEY=key) as running:
        yield running
