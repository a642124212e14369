"""With OpenID Connect on, `serve`'s banner says how to authenticate, and its pyiceberg snippet works once the
client's own id and secret are filled in (it once printed a snippet without credentials that got 401)."""

from __future__ import annotations

import re

import pytest
from pyiceberg.catalog import load_catalog

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog
from tests.e2e.test_serve_front_door import banner_of

pytestmark = pytest.mark.e2e


def test_the_banner_names_the_token_endpoint_and_its_pyiceberg_snippet_authenticates(
    secured_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    banner = banner_of(secured_catalog)
    snippet = re.search(r"^\s*(catalog = load_catalog\(.*\))$", banner, re.MULTILINE)
    assert snippet is not None, banner
    secret, _ = idp.clients["alice"]
    code = snippet.group(1).replace("<client-id>:<client-secret>", f"alice:{secret}")
    scope: dict[str, object] = {"load_catalog": load_catalog}

    exec(code, scope)  # the banner's own line, as a user would paste it
    namespaces = scope["catalog"].list_namespaces()  # type: ignore[attr-defined]

    assert f"OpenID Connect ({idp.issuer})" in banner
    assert idp.token_endpoint in banner
    assert f"spark.sql.catalog.catalog_es.oauth2-server-uri={idp.token_endpoint}" in banner
    assert "spark.sql.catalog.catalog_es.credential=<client-id>:<client-secret>" in banner
    assert namespaces == []
