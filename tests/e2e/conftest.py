"""A running `catalog-es serve` process for end-to-end tests with real clients.

Servers are forked from a per-process zygote that imported the server once (tests/e2e/server_zygote.py) when the
server's environment differs from this process's in `CATALOG_ES_*` keys alone; see tests/README.md.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from msgspec import Struct

from tests.e2e.forked import CLI, ForkedProcess, run_cli, spawn_server  # noqa: F401 - CLI, run_cli: for the tests
from tests.integration.s3_server import s3_endpoint  # noqa: F401 - the moto S3 fixture
from tests.integration.store_emulators import azurite, gcs_emulator  # noqa: F401 - Azurite, the GCS emulator

T = TypeVar("T")
# The moto S3 server (and other test endpoints) listen on 127.0.0.1: allowed for every test server unless
# its environment says otherwise (the production default allows AWS's own endpoints only).
TEST_ALLOWED_HOSTS = {"CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS": "127.0.0.1"}
# `KEY=VALUE` pairs (whitespace-separated) every test server gets unless its test sets the key itself: runs
# a suite under another setting, even servers started without the caller's environment (test_conformance).
SERVER_ENV_VARIABLE = "CATALOG_ES_TEST_SERVER_ENV"


class RunningCatalog(Struct):
    process: subprocess.Popen[bytes] | ForkedProcess
    base_url: str
    data_dir: Path
    env: dict[str, str]
    log_path: Path | None = None

    @property
    def catalog_uri(self) -> str:
        return f"{self.base_url}/catalog"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env_overrides() -> dict[str, str]:
    """The settings `CATALOG_ES_TEST_SERVER_ENV` names, e.g. `CATALOG_ES__SERVER_SIDE_REBASE=off`."""
    pairs = os.environ.get(SERVER_ENV_VARIABLE, "").split()
    if malformed := [pair for pair in pairs if "=" not in pair]:
        raise ValueError(f"{SERVER_ENV_VARIABLE}: expected KEY=VALUE pairs, got {malformed}")
    return dict(pair.split("=", 1) for pair in pairs)


def start_catalog(
    data_dir: Path, env: dict[str, str], port: int | None = None, args: Sequence[str] = ()
) -> RunningCatalog:
    """Start the server and wait until /health answers 200 (or fail with its output).

    File warehouses may lie anywhere in the test's temporary directory (the data dir's parent) unless
    `env` names other roots: with an external database the server has none by default.
    """
    port = port or free_port()
    # The in-process task worker polls often, so a purge follows its drop within a test's patience.
    env = {
        "CATALOG_ES__FILE_STORAGE_ROOTS": str(data_dir.parent),
        "CATALOG_ES__TASK_WORKER__POLL_SECONDS": "0.2",
        **server_env_overrides(),
        **env,
    }
    log_path = data_dir.parent / f"serve-{port}.log"
    process = spawn_server(
        ["serve", "--data-dir", str(data_dir), "--port", str(port), *args], {**TEST_ALLOWED_HOSTS, **env}, log_path
    )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120  # generous: the suite runs several test processes on two cores
    with httpx.Client(timeout=1) as http:  # one client: a new one per poll costs an SSL context each
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"catalog-es serve exited with {process.returncode}: {log_path.read_text()}")
            try:
                if http.get(f"{base_url}/health").status_code == 200:
                    return RunningCatalog(
                        process=process, base_url=base_url, data_dir=data_dir, env=env, log_path=log_path
                    )
            except httpx.TransportError:
                pass
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"catalog-es serve did not become healthy: {log_path.read_text()}")


def eventually(check: Callable[[], T], timeout: float = 30.0) -> T:
    """`check()` once it is truthy, or its last value after `timeout` (for work the task worker does later)."""
    deadline = time.monotonic() + timeout
    while not (value := check()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


def stop_catalog(catalog: RunningCatalog) -> int:
    catalog.process.terminate()
    return catalog.process.wait(timeout=30)


@pytest.fixture
def catalog(pg_dsn: str, tmp_path: Path) -> Iterator[RunningCatalog]:
    """A server on a fresh database (external-DSN mode), data files under a temporary directory."""
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn}
    running = start_catalog(tmp_path / "data", env)
    yield running
    stop_catalog(running)


class RestApi(Struct):
    """An HTTP client on `<base>/catalog/v1/` and the warehouse prefix that /config advertises."""

    http: httpx.Client
    prefix: str
    warehouse: str = "demo"

    def url(self, path: str) -> str:
        """`path` below `/catalog/v1/{prefix}/`."""
        return f"{self.prefix}/{path.lstrip('/')}"


@contextmanager
def open_rest(catalog: RunningCatalog, warehouse: str = "demo") -> Iterator[RestApi]:
    """Raw REST access to one of the running catalog's warehouses."""
    with httpx.Client(base_url=f"{catalog.catalog_uri}/v1/", timeout=30) as http:
        config = http.get("config", params={"warehouse": warehouse})
        assert config.status_code == 200, config.text
        yield RestApi(http=http, prefix=config.json()["defaults"]["prefix"], warehouse=warehouse)


@pytest.fixture
def rest(catalog: RunningCatalog) -> Iterator[RestApi]:
    """Raw REST access to the running catalog's default warehouse `demo`."""
    with open_rest(catalog) as api:
        yield api
