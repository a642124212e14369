"""SIGTERM drains: a request in flight when the server is told to stop is answered before the process exits."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

import httpx

from tests.e2e.conftest import start_catalog


def _port_closed(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


def test_a_request_in_flight_at_sigterm_is_answered_before_the_server_exits(pg_dsn: str, tmp_path: Path) -> None:
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__LOG_LEVEL": "warning"}
    running = start_catalog(tmp_path / "data", env)
    port = int(running.base_url.rsplit(":", 1)[1])
    profile = {"type": "file", "location": str(tmp_path / "w")}
    warehouse = httpx.post(
        f"{running.base_url}/management/v1/warehouse", json={"warehouse-name": "w", "storage-profile": profile}
    ).json()["warehouse-id"]
    body = json.dumps({"namespace": ["drained"]}).encode()
    head = (
        f"POST /catalog/v1/{warehouse}/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as slow:
        slow.sendall(head + body[:5])  # the request is in flight: its body is still arriving
        running.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while not _port_closed(port) and time.monotonic() < deadline:  # the server stopped accepting
            time.sleep(0.05)
        closed = _port_closed(port)
        slow.sendall(body[5:])
        answer = b""
        while chunk := slow.recv(65536):
            answer += chunk
    code = running.process.wait(timeout=60)

    assert closed
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert b'"drained"' in answer
    assert code == 0


def test_a_stalled_request_does_not_keep_a_stopping_server_alive_past_the_graceful_timeout(
    pg_dsn: str, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__LOG_LEVEL": "warning",
        "CATALOG_ES__GRACEFUL_SHUTDOWN_SECONDS": "1",
    }
    running = start_catalog(tmp_path / "data", env)
    port = int(running.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as stalled:
        stalled.sendall(b"POST /management/v1/warehouse HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        httpx.get(f"{running.base_url}/health")  # the stalled request has reached the server
        running.process.send_signal(signal.SIGTERM)
        try:
            code = running.process.wait(timeout=60)  # the body never completes: only the timeout ends it
        finally:
            running.process.kill()

    assert code == 0
