"""The console with OIDC and builtin authorization on: its shell and config are public, its data is not, and
with a user's token it shows what that user may see."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.auth.conftest import authz_catalog, idp  # noqa: F401 - fixtures
from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog
from tests.e2e.console.browser import browser  # noqa: F401 - the fixture
from tests.e2e.console.test_console import WAIT_SECONDS, wait_for

pytestmark = pytest.mark.e2e


def test_shell_is_public_and_data_needs_a_token(authz_catalog: RunningCatalog, idp: OpenIdProvider) -> None:  # noqa: F811
    base = authz_catalog.base_url
    for path in ("/ui", "/ui/static/js/main.js", "/ui/static/vendor/swagger-ui/swagger-ui.css"):
        assert httpx.get(f"{base}{path}").status_code == 200, path
    config = httpx.get(f"{base}/ui/config.json").json()
    assert config["auth"] == "oidc"
    assert config["issuer"] == idp.issuer.rstrip("/")
    refused = httpx.get(f"{base}/management/v1/warehouse")
    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "NotAuthorizedException"


def test_console_shows_what_the_token_may_see(authz_catalog: RunningCatalog, idp: OpenIdProvider, browser: Any) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    ui = f"{authz_catalog.base_url}/ui"
    browser.get(ui)
    wait_for(browser, ".login h1", "Log in")  # no token yet: the login page, no data requested

    def signed_in_as(client: str) -> Any:
        browser.execute_script("sessionStorage.setItem('catalog-es.token', arguments[0])", idp.token(client))
        browser.get(f"{ui}#/")
        browser.refresh()
        return WebDriverWait(browser, WAIT_SECONDS).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "#main[data-loaded]")
        )

    main = signed_in_as("admin")
    assert "demo" in main.text  # the server admin sees the default warehouse
    main = signed_in_as("alice")
    assert "demo" not in main.text  # alice has no grant: the warehouse stays hidden
    assert main.find_elements(By.CSS_SELECTOR, ".error")
