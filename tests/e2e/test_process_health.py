"""The processes without an HTTP API answer liveness probes on --health-port (what compose and Helm probe), and stop
cleanly on SIGTERM (issue 31)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import CLI, free_port

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("command", [["worker"], ["projector", "run", "--all"]], ids=["worker", "projector"])
def test_the_process_answers_its_health_port_while_it_runs_and_exits_cleanly_on_sigterm(
    command: list[str], pg_dsn: str, tmp_path: Path
) -> None:
    port = free_port()
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__LOG_LEVEL": "warning"}
    process = subprocess.Popen(
        [*CLI, *command, "--data-dir", str(tmp_path / "data"), "--health-port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline, answer = time.monotonic() + 60, None
        while answer is None and time.monotonic() < deadline and process.poll() is None:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
            except httpx.TransportError:
                time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
        errors = process.stderr.read().decode() if process.stderr else ""

    assert answer is not None, errors
    assert answer.status_code == 200
    assert answer.text == "ok\n"
    assert code == 0, errors
