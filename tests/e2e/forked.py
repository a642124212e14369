"""catalog-es processes of the tests (servers, workers, CLI commands): forked from the zygote when they may be.

Servers and commands fork from a per-process zygote that imported the server once (tests/e2e/server_zygote.py)
when their environment differs from this process's in `CATALOG_ES_*` keys alone; see tests/README.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.e2e.server_zygote import DISABLE_VARIABLE, ForkedProcess, Zygote

CLI = [sys.executable, "-m", "api"]
# The environment of this test process as the suite set it up (tests/conftest.py), before any test changed it:
# the zygote's own, and so the one its forked servers were imported under.
ZYGOTE_ENV = dict(os.environ)
_ZYGOTE: list[Zygote] = []
# Set by pytest around each test (the server never reads it): no reason for a fresh interpreter.
PYTEST_BOOKKEEPING = {"PYTEST_CURRENT_TEST"}


def forkable(env: dict[str, str]) -> bool:
    """Whether the zygote may start a server under `env`: it differs from the zygote's only in catalog-es keys.

    Nothing catalog-es imports reads those at import time (settings are read when `serve` runs), so a server
    forked from the zygote behaves as one started afresh; any other difference gets a fresh interpreter.
    """
    if os.environ.get(DISABLE_VARIABLE):
        return False
    changed = {key for key in env.keys() | ZYGOTE_ENV.keys() if env.get(key) != ZYGOTE_ENV.get(key)}
    return all(key.startswith("CATALOG_ES_") or key in PYTEST_BOOKKEEPING for key in changed)


def _zygote() -> Zygote:
    """This test process's zygote, started on first use (again if it died)."""
    if not _ZYGOTE or not _ZYGOTE[0].alive():
        _ZYGOTE[:] = [Zygote(ZYGOTE_ENV)]
    return _ZYGOTE[0]


def spawn_server(args: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes] | ForkedProcess:
    """`python -m api ARGS` with stdout and stderr appended to `log_path`: forked from the zygote when it may be."""
    if forkable(env):
        return _zygote().spawn(args, env, log_path)
    with log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen([*CLI, *args], env=env, stdout=log, stderr=subprocess.STDOUT)


def run_cli(
    args: Sequence[str], env: Mapping[str, str], *, timeout: float = 300, check: bool = False
) -> subprocess.CompletedProcess[str]:
    """`python -m api ARGS` to its end, its output as text: what `subprocess.run(..., capture_output=True, text=True)`
    gives, forked from the zygote when `env` allows it (a CLI command's interpreter and imports cost ~1.3 s of CPU).

    Raises: subprocess.TimeoutExpired (the command killed), and with `check` subprocess.CalledProcessError.
    """
    command = [*CLI, *args]
    if not forkable(dict(env)):
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=check)
    with tempfile.TemporaryDirectory(prefix="cli-") as directory:
        stdout, stderr = Path(directory) / "stdout", Path(directory) / "stderr"
        process = _zygote().spawn(args, env, stdout, stderr)
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        result = subprocess.CompletedProcess(command, returncode, stdout.read_text(), stderr.read_text())
    if check:
        result.check_returncode()
    return result
