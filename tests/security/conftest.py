"""Security suite fixtures: the e2e servers (anonymous, OIDC + builtin authz) and moto S3, reused as they are."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from catalog_es.store.secrets import generate_secrets_key
from tests.e2e.auth.conftest import authz_catalog, idp, secured_catalog  # noqa: F401 - fixtures
from tests.e2e.auth.openid_provider import AUDIENCE, OpenIdProvider
from tests.e2e.conftest import RunningCatalog, catalog, rest, s3_endpoint, start_catalog, stop_catalog  # noqa: F401
from tests.security.isolated_server import isolated_catalog  # noqa: F401 - fixture


@pytest.fixture
def keyed_authz_catalog(pg_dsn: str, tmp_path: Path, idp: OpenIdProvider) -> Iterator[RunningCatalog]:  # noqa: F811
    """As `authz_catalog`, with a secrets key (so that S3 warehouses can hold credentials)."""
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__SECRETS_KEY": generate_secrets_key(),
        "CATALOG_ES__NATS__ENABLED": "false",
        "CATALOG_ES__OPENID_PROVIDER_URI": idp.issuer,
        "CATALOG_ES__OPENID_AUDIENCE": AUDIENCE,
        "CATALOG_ES__OPENID_ROLES_CLAIM": "roles",
        "CATALOG_ES__AUTHZ__BACKEND": "builtin",
    }
    running = start_catalog(tmp_path / "data", env)
    response = httpx.post(
        f"{running.base_url}/management/v1/bootstrap",
        json={"accept-terms-of-use": True, "user-name": "The Admin"},
        headers={"Authorization": f"Bearer {idp.token('admin')}"},
        timeout=30,
    )
    assert response.status_code == 204, response.text
    yield running
    stop_catalog(running)
