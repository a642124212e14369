"""Servers a security module's tests share (one per module and settings), each test acting on objects of its own.

A server start costs a second or two of CPU (the server, its migrations, its database): a module whose tests need
the same settings shares one, on a new database of its own, and each test names its own warehouses, projects and
roles. A test that needs a server to itself (other settings, a whole-server view) keeps a per-test fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.auth.conftest import bootstrapped, catalog_server
from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog, stop_catalog


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
