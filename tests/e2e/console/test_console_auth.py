"""The console with OIDC and builtin authorization on: its shell and config are public, its data is not, and
with a user's token it shows what that user may see."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.e2e.auth.conftest import CLIENTS, authz_catalog, bootstrapped, catalog_server, idp  # noqa: F401 - fixtures
from tests.e2e.auth.openid_provider import CONSOLE_CLIENT, RESOURCE, SCOPE, OpenIdProvider
from tests.e2e.conftest import RunningCatalog, free_port, stop_catalog
from tests.e2e.console.browser import browser  # noqa: F401 - the fixture
from tests.e2e.console.test_console import WAIT_SECONDS, click_tab, open_page, wait_for

pytestmark = pytest.mark.e2e
NAMESPACE, TABLE = "sales", "orders"


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


@pytest.fixture
def console_login(pg_dsn: str, tmp_path: Path) -> Iterator[tuple[RunningCatalog, OpenIdProvider]]:
    """A provider with the public `console` client (code + PKCE) redirecting to a catalog started on a port
    chosen first, so that the provider knows the console's redirect URI."""
    port = free_port()
    provider = OpenIdProvider(tmp_path, free_port(), CLIENTS, console_redirect_uri=f"http://127.0.0.1:{port}/ui")
    provider.start()
    ui = {
        "CATALOG_ES__UI__CLIENT_ID": CONSOLE_CLIENT,
        "CATALOG_ES__UI__SCOPE": SCOPE,
        "CATALOG_ES__UI__RESOURCE": RESOURCE,
    }
    running = bootstrapped(catalog_server(pg_dsn, tmp_path, provider, "builtin", port, **ui), provider)
    yield running, provider
    stop_catalog(running)
    provider.stop()


def test_console_logs_in_with_the_provider_and_shows_permissions(
    console_login: tuple[RunningCatalog, OpenIdProvider],
    browser: Any,  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    catalog, provider = console_login
    admin = load_catalog(
        "admin",
        type="rest",
        uri=catalog.catalog_uri,
        warehouse="demo",
        credential="admin:{}".format(CLIENTS["admin"][0]),
        **{"oauth2-server-uri": provider.token_endpoint},
    )
    admin.create_namespace(NAMESPACE)
    admin.create_table(f"{NAMESPACE}.{TABLE}", schema=Schema(NestedField(1, "id", LongType(), required=False)))
    warehouse = httpx.get(
        f"{catalog.base_url}/catalog/v1/config",
        params={"warehouse": "demo"},
        headers={"Authorization": f"Bearer {provider.token('admin')}"},
    ).json()["defaults"]["prefix"]
    browser.get(f"{catalog.base_url}/ui")
    wait_for(browser, "#login").click()
    # The provider's own pages (devInteractions): sign in as `admin`, the server admin, then consent.
    wait_for(browser, "input[name=login]").send_keys("admin")
    browser.find_element(By.CSS_SELECTOR, "input[name=password]").send_keys("any")
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(browser, "button[autofocus]").click()
    # Back on the console, it exchanges the code for a token: navigating before that ends would drop the login.
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda d: d.execute_script("return sessionStorage.getItem('catalog-es.token')"), "the code exchange"
    )
    main = open_page(browser, f"{catalog.base_url}/ui#/")
    assert "demo" in main.text
    token = browser.execute_script("return sessionStorage.getItem('catalog-es.token')")
    assert token
    assert token.count(".") == 2  # a JWT access token for the catalog, from the code exchange
    browser.save_screenshot(str(catalog.data_dir.parent / "console-pkce-home.png"))

    open_page(browser, f"{catalog.base_url}/ui#/w/{warehouse}/t/{NAMESPACE}/{TABLE}")
    click_tab(browser, "Permissions")
    table = wait_for(browser, "[data-section=permissions]")
    assert "ownership" in table.text
    assert "inherited" in table.text
    browser.save_screenshot(str(catalog.data_dir.parent / "console-permissions.png"))
