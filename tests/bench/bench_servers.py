"""The servers a benchmark run starts: PostgreSQL, catalog-es, the peers, the hello-world; their CPU and RSS."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx
import psutil
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from api.runtime.embedded_postgres import embedded_dsn

ROOT = Path(__file__).resolve().parents[2]
PEERS_VENV = ROOT / ".bench" / "peers-venv"
LAKANA_VERSION = "0.20.0"
LAKANA_KEY_ID = "bench"
LAKANA_SECRET = "benchsecretbenchsecretbenchsecret"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def admin_dsn(work: Path, given: str | None) -> str:
    """A given PostgreSQL, else the embedded one (it stops when this process exits)."""
    return given or embedded_dsn(work / "pg-data")


def fresh_database(admin: str, name: str) -> str:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(admin)
    params["dbname"] = name
    return make_conninfo(**params)


def sqlalchemy_url(dsn: str, driver: str) -> str:
    """`postgresql+<driver>://…` for a libpq DSN; pg8000 reaches a socket directory through `unix_sock`."""
    params = conninfo_to_dict(dsn)
    user = quote(str(params.get("user", "postgres")))
    password = quote(str(params.get("password") or ""))
    host, port, db = str(params.get("host", "127.0.0.1")), str(params.get("port", "5432")), params["dbname"]
    auth = f"{user}:{password}@" if password else f"{user}@"
    if host.startswith("/"):
        if driver == "pg8000":
            return f"postgresql+pg8000://{auth}/{db}?unix_sock={host}/.s.PGSQL.{port}"
        return f"postgresql+{driver}://{auth}/{db}?host={host}&port={port}"
    return f"postgresql+{driver}://{auth}{host}:{port}/{db}"


def cpu_seconds(processes: list[psutil.Process]) -> float:
    """User + system CPU of these processes (those that ended meanwhile count nothing)."""
    total = 0.0
    for proc in processes:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


@dataclass
class Server:
    """A server process started by the harness, and how to reach its catalog API."""

    name: str
    process: subprocess.Popen[bytes]
    base_url: str  # root of the catalog API, ending before `namespaces`
    headers: dict[str, str] = field(default_factory=dict)
    log: Path | None = None

    def tree(self) -> list[psutil.Process]:
        try:
            parent = psutil.Process(self.process.pid)
            return [parent, *parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.tree())

    def rss_mb(self) -> float:
        total = 0
        for proc in self.tree():
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        return total / 1e6

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float = 90.0) -> float:
    """Seconds until `url` answers 200; raises when the process dies or time runs out."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before {url} answered")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("CATALOG_ES__", "LAKANA_"))}


def start_catalog_es(
    dsn: str, work: Path, workers: int, *, checkout: Path | None = None, name: str = "catalog-es"
) -> tuple[Server, float]:
    """`catalog-es serve` on an external DSN (no NATS); returns the server and its cold start in seconds.

    `checkout`: serve the code of another checkout (e.g. a worktree of `main`) with this environment's packages.
    """
    port = free_port()
    env = _clean_env() | {
        "CATALOG_ES__PG_DSN": dsn,
        "CATALOG_ES__DATA_DIR": str(work / name),
        # With an external database the server has no file root unless named: the `demo` warehouse's, as embedded.
        "CATALOG_ES__FILE_STORAGE_ROOTS": str(work / name / "warehouse"),
        "CATALOG_ES__PORT": str(port),
        "CATALOG_ES__LOG_LEVEL": "warning",
        "CATALOG_ES__NATS__ENABLED": "false",
        "CATALOG_ES__WORKERS": str(workers),
    }
    command = [str(Path(sys.executable).parent / "catalog-es"), "serve"]
    if checkout is not None:  # its packages first on the path, ahead of this environment's editable install
        env |= {"PYTHONPATH": str(checkout), "PYTHONSAFEPATH": "1"}
        command = [sys.executable, "-m", "api", "serve"]
    log = work / f"{name}.log"
    process = _spawn(command, env, log)
    cold = wait_ready(f"http://127.0.0.1:{port}/catalog/v1/config?warehouse=demo", process)
    config = httpx.get(f"http://127.0.0.1:{port}/catalog/v1/config?warehouse=demo").json()
    prefix = config["overrides"].get("prefix") or config["defaults"]["prefix"]
    return Server(name, process, f"http://127.0.0.1:{port}/catalog/v1/{prefix}", log=log), cold


def start_shim(dsn: str, work: Path) -> Server:
    port = free_port()
    log = work / "sqlcatalog-shim.log"
    args = [sys.executable, "-m", "tests.bench.sqlcatalog_shim", "--dsn", sqlalchemy_url(dsn, "psycopg")]
    args += ["--warehouse", str(work / "shim-warehouse"), "--port", str(port)]
    process = _spawn(args, _clean_env(), log)
    wait_ready(f"http://127.0.0.1:{port}/v1/config", process)
    return Server("sqlcatalog-shim", process, f"http://127.0.0.1:{port}/v1", log=log)


def ensure_peers_venv() -> Path | None:
    """`.bench/peers-venv` with lakana-server, created on first use; None when it cannot be installed."""
    binary = PEERS_VENV / "bin" / "lakana-server"
    if binary.exists():
        return binary
    # No pip of its own (ensurepip costs ~6 s of CPU): this interpreter's pip installs into it (`--python`).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(PEERS_VENV)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(PEERS_VENV / "bin" / "python"), "install", "-q"]
    pip.append(f"lakana-server=={LAKANA_VERSION}")
    done = subprocess.run(pip, check=False)
    return binary if done.returncode == 0 and binary.exists() else None


def start_lakana(dsn: str, work: Path) -> Server | None:
    """lakana-server from its own venv, one environment `bench` with file storage; None if unavailable."""
    binary = ensure_peers_venv()
    if binary is None:
        return None
    port = free_port()
    env = _clean_env() | {
        "LAKANA_DATABASE__URL": sqlalchemy_url(dsn, "pg8000"),
        "LAKANA_BOOTSTRAP_PAT_KEY_ID": LAKANA_KEY_ID,
        "LAKANA_BOOTSTRAP_PAT_SECRET": LAKANA_SECRET,
        "LAKANA_PORT": str(port),
        "LAKANA_LOG__LEVEL": "WARNING",
        "LAKANA_LOG__ACCESS": "false",
    }
    log = work / "lakana.log"
    subprocess.run([str(binary), "migrate"], env=env, check=True, capture_output=True)
    process = _spawn([str(binary)], env, log)
    wait_ready(f"http://127.0.0.1:{port}/v1/config", process)
    headers = {"Authorization": f"Bearer lakana_pat_{LAKANA_KEY_ID}_{LAKANA_SECRET}"}
    storage = work / "lakana-warehouse"
    if storage.exists():
        shutil.rmtree(storage)
    storage.mkdir(parents=True)
    body = {"name": "bench", "storage": {"scheme": "file", "root": storage.as_uri()}}
    created = httpx.post(f"http://127.0.0.1:{port}/api/v1/environments", json=body, headers=headers, timeout=30)
    if created.status_code not in (201, 409):
        raise RuntimeError(f"lakana: creating the environment answered {created.status_code}: {created.text}")
    return Server("lakana-server", process, f"http://127.0.0.1:{port}/v1/bench", headers=headers, log=log)


def start_hello_world(work: Path) -> Server:
    port = free_port()
    log = work / "hello-world.log"
    process = _spawn([sys.executable, "-m", "tests.bench.hello_world", "--port", str(port)], _clean_env(), log)
    wait_ready(f"http://127.0.0.1:{port}/hello", process)
    return Server("hello-world", process, f"http://127.0.0.1:{port}", log=log)


def database_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"
