"""The console in a real browser: the tree, a table's schema and snapshots, the timeline, the catalog as of
an instant, and Swagger UI at /docs, all without a request leaving loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import RunningCatalog
from tests.e2e.console.browser import browser, off_loopback, requested_urls  # noqa: F401 - the fixture
from tests.e2e.console.seed import NAMESPACE, NEW_NAME, OLD_NAME, VIEW, seed

pytestmark = pytest.mark.e2e
WAIT_SECONDS = 30


def open_page(driver: Any, url: str) -> Any:
    """Load `url` and wait until the console says it rendered the page (or its error)."""
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    fragment = "#" + url.partition("#")[2] if "#" in url else ""
    driver.get(url)  # a new fragment on the same page is a navigation without a reload: wait for its own render
    main = WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: d.find_element(By.CSS_SELECTOR, f"#main[data-loaded='{fragment}']")
    )
    assert not main.find_elements(By.CSS_SELECTOR, ".error"), main.text
    return main


def wait_for(driver: Any, css: str, text: str | None = None) -> Any:
    from selenium.webdriver.common.by import By  # noqa: PLC0415
    from selenium.webdriver.support.ui import WebDriverWait  # noqa: PLC0415

    def found(d: Any) -> Any:
        for element in d.find_elements(By.CSS_SELECTOR, css):
            if text is None or text in element.text:
                return element
        return False

    return WebDriverWait(driver, WAIT_SECONDS).until(found, f"{css} with {text!r}")


def click_tab(driver: Any, label: str) -> None:
    wait_for(driver, f"button[data-tab='{label}']").click()


def test_root_redirects_to_the_console(catalog: RunningCatalog) -> None:
    response = httpx.get(f"{catalog.base_url}/", follow_redirects=False)
    assert response.status_code in (301, 302, 307, 308), response.text
    assert response.headers["location"].endswith("/ui")
    config = httpx.get(f"{catalog.base_url}/ui/config.json").json()
    assert config == {"auth": "none", "version": config["version"]}


def test_console_browses_history_and_docs_offline(catalog: RunningCatalog, browser: Any, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By  # noqa: PLC0415

    story = seed(catalog.base_url)
    ui = f"{catalog.base_url}/ui"
    shots = tmp_path / "screenshots"
    shots.mkdir()

    # The tree: the warehouse opens by itself; opening the namespace lists the renamed table and the view.
    open_page(browser, f"{catalog.base_url}/")
    wait_for(browser, "#tree li[data-kind='ns']", NAMESPACE).find_element(By.CSS_SELECTOR, ".toggle").click()
    wait_for(browser, "#tree li[data-kind='table']", NEW_NAME)
    wait_for(browser, "#tree li[data-kind='view']", VIEW)
    assert "demo" in browser.find_element(By.ID, "main").text
    browser.save_screenshot(str(shots / "1-tree.png"))

    # The table page: schema with ids, types and docs; three snapshots of ten rows each.
    main = open_page(browser, f"{ui}#/w/{story.warehouse_id}/t/{NAMESPACE}/{NEW_NAME}")
    schema = main.find_element(By.CSS_SELECTOR, "table[data-section='schema']").text
    assert "1 id long required" in schema
    assert "3 channel string optional where the order came from" in schema
    assert "column added: channel string" in main.text
    browser.save_screenshot(str(shots / "2-table-schema.png"))
    click_tab(browser, "Snapshots")
    rows = wait_for(browser, "table[data-section='snapshots']").find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 3
    assert [row.text.split()[-3] for row in rows] == ["10", "20", "30"]  # total rows after each append
    browser.save_screenshot(str(shots / "3-table-snapshots.png"))

    # The timeline: who did what, the rename as old → new.
    click_tab(browser, "History")
    wait_for(browser, "ol.timeline li[data-type='table.renamed']", f"renamed {OLD_NAME} → {NEW_NAME}")
    timeline = browser.find_element(By.CSS_SELECTOR, "ol.timeline").text
    assert timeline.count("appended (append): +10 rows") == 3
    assert "column added: channel string" in timeline
    browser.save_screenshot(str(shots / "4-table-timeline.png"))
    click_tab(browser, "Charts")
    wait_for(browser, "svg.chart[aria-label='Rows'] path")
    browser.save_screenshot(str(shots / "5-table-charts.png"))

    # The view: its SQL per dialect.
    main = open_page(browser, f"{ui}#/w/{story.warehouse_id}/v/{NAMESPACE}/{VIEW}")
    for dialect in ("spark", "trino"):
        assert dialect in main.text
    assert "WHERE amount > 10" in main.text

    # The catalog as it was just before the rename: the old name, not the new one.
    at = story.before_rename.isoformat().replace("+00:00", "Z")
    main = open_page(browser, f"{ui}#/history?at={at}")
    wait_for(browser, "#main p", "As of")
    names = [
        li.get_attribute("data-name") for li in main.find_elements(By.CSS_SELECTOR, ".asof-tree li[data-kind='table']")
    ]
    assert names == [OLD_NAME]
    browser.save_screenshot(str(shots / "6-as-of-before-rename.png"))

    open_page(browser, f"{ui}#/ops")
    browser.save_screenshot(str(shots / "7-operations.png"))
    console_requests = requested_urls(browser)

    # Swagger UI from the vendored files: the operations list renders.
    browser.get(f"{catalog.base_url}/docs")
    wait_for(browser, ".opblock-summary-path", "/v1/config")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".opblock")) > 30
    browser.save_screenshot(str(shots / "8-docs.png"))

    urls = console_requests + requested_urls(browser)
    assert any(url.endswith("/ui/static/vendor/swagger-ui/swagger-ui-bundle.js") for url in urls)
    assert off_loopback(urls) == []
