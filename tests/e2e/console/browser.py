"""Headless Debian chromium through chromedriver (selenium), with the network outside loopback cut off."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
    # Every name but loopback fails to resolve: a page that needs the internet breaks here, visibly.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


def chromium_missing() -> str | None:
    if shutil.which("chromium") is None or not Path(CHROMEDRIVER).exists():
        return "needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver"
    try:
        import selenium  # noqa: F401, PLC0415 - optional: only this test needs it
    except ImportError:
        return "needs selenium (pip install selenium)"
    return None


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    reason = chromium_missing()
    if reason:
        pytest.skip(reason)
    from selenium import webdriver  # noqa: PLC0415
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415

    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def requested_urls(driver: object) -> list[str]:
    """Every URL the browser asked for since the last call (from the DevTools performance log)."""
    urls = []
    for entry in driver.get_log("performance"):  # type: ignore[attr-defined]
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def off_loopback(urls: list[str]) -> list[str]:
    """The network requests among `urls` to anything but 127.0.0.1 (chromium's own chrome:// pages are not)."""
    network = [url for url in urls if urlsplit(url).scheme in ("http", "https", "ws", "wss")]
    return [url for url in network if urlsplit(url).hostname != "127.0.0.1"]
