"""A `catalog-es serve` in its own network namespace with only `lo`: nothing it tries can leave the machine.

The server reaches PostgreSQL through the embedded server's Unix socket; the test talks to it by joining
its namespace (setns) for the duration of each block. Whether the server tried to reach any address
outside the namespace shows in the kernel's counters: every attempt (TCP connect, UDP send, a DNS
query) to an address without a route counts in that namespace's `OutNoRoutes`.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.databases import new_database
from tests.e2e.conftest import CLI

_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
# A name that is on the server's allow-list but resolves to the cloud metadata address (its /etc/hosts only).
METADATA_ALIAS = "metadata-alias.test"


def _setns(fd: int) -> None:
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


@contextmanager
def network_of(pid: int) -> Iterator[None]:
    """Run the block (this thread only) inside the network namespace of `pid`."""
    with open("/proc/thread-self/ns/net") as home, open(f"/proc/{pid}/ns/net") as target:
        _setns(target.fileno())
        try:
            yield
        finally:
            _setns(home.fileno())


@dataclass
class IsolatedCatalog:
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path

    @contextmanager
    def client(self) -> Iterator[httpx.Client]:
        with network_of(self.process.pid), httpx.Client(base_url=self.base_url, timeout=60) as http:
            yield http

    def attempts_outside(self) -> int:
        """Packets the namespace tried to send to an address it has no route to (IPv4 and IPv6)."""
        counters = Path(f"/proc/{self.process.pid}/net/snmp").read_text().splitlines()
        names, values = counters[0].split(), counters[1].split()
        total = int(dict(zip(names, values, strict=True))["OutNoRoutes"])
        for line in Path(f"/proc/{self.process.pid}/net/snmp6").read_text().splitlines():
            name, value = line.split()
            if name == "Ip6OutNoRoutes":
                total += int(value)
        return total


def _wait_healthy(catalog: IsolatedCatalog) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if catalog.process.poll() is not None:
            raise RuntimeError(f"isolated serve exited with {catalog.process.returncode}: {catalog.log.read_text()}")
        try:
            with catalog.client() as http:
                if http.get("/health", timeout=1).status_code == 200:
                    return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    catalog.process.kill()
    raise RuntimeError(f"isolated serve did not become healthy: {catalog.log.read_text()}")


@contextmanager
def isolated_server(pg_dsn: str, directory: Path, file_root: Path) -> Iterator[IsolatedCatalog]:
    """The server alone in a network namespace (and a mount namespace, for its own /etc/hosts), its data and
    log under `directory`, its file warehouses anywhere under `file_root`."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs root, unshare and ip to give the server a namespace of its own")
    if "host=/" not in pg_dsn:
        pytest.skip("needs PostgreSQL on a Unix socket (the embedded server), reachable from another namespace")
    hosts = directory / "hosts"
    hosts.write_text(f"127.0.0.1 localhost\n169.254.169.254 {METADATA_ALIAS}\n")
    log = directory / "serve.log"
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,  # the embedded server's Unix socket: no network needed
        "CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS": f"127.0.0.1,{METADATA_ALIAS}",
        "CATALOG_ES__FILE_STORAGE_ROOTS": str(file_root),  # an external database has none by default
    }
    port = 8181
    script = (
        f"mount --bind {hosts} /etc/hosts && ip link set lo up && "
        f'exec "$@" serve --data-dir {directory / "data"} --port {port}'
    )
    with log.open("ab") as output:
        process = subprocess.Popen(
            ["unshare", "--net", "--mount", "sh", "-c", script, "sh", *CLI],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    catalog = IsolatedCatalog(process=process, base_url=f"http://127.0.0.1:{port}", log=log)
    try:
        _wait_healthy(catalog)
        yield catalog
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def isolated_catalog(pg_dsn: str, tmp_path: Path) -> Iterator[IsolatedCatalog]:
    """An isolated server for one test, on the test's new database."""
    with isolated_server(pg_dsn, tmp_path, tmp_path) as catalog:
        yield catalog


@pytest.fixture(scope="module")
def module_isolated_catalog(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[IsolatedCatalog]:
    """One isolated server for the module's tests (each on warehouses of its own), on a new database; its file
    warehouses may lie anywhere under the run's temporary directory."""
    with new_database(pg_admin_dsn, "m") as dsn:
        directory = tmp_path_factory.mktemp("isolated")
        with isolated_server(dsn, directory, tmp_path_factory.getbasetemp()) as catalog:
            yield catalog
