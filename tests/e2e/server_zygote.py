"""A fork server for `catalog-es serve`: imports the server once per test process, forks one child per start.

Importing the server costs ~2 s of CPU; the suite starts hundreds of servers. The zygote (`python -m
tests.e2e.server_zygote`, one per test process, started on first use) imports everything `serve` imports, then
forks a child per request that runs `python -m api ARGS` exactly as the interpreter would (`runpy`'s -m path), with
the requested environment, working directory and log file as stdout/stderr. The child's exit status goes back to
the test process, where `ForkedProcess` offers what tests use of `subprocess.Popen` (pid, poll, wait, terminate,
kill, send_signal, returncode). `tests.e2e.forked.spawn_server` (under `start_catalog`) uses it only when the
requested environment differs from the zygote's own in catalog-es settings alone (nothing of ours reads those at
import time), and falls back to a plain `subprocess.Popen` otherwise, or with CATALOG_ES_TEST_NO_ZYGOTE=1.

Protocol: one JSON object per line. Request {"args", "env", "cwd", "log", "stderr"} on the zygote's stdin (`stderr`
a file of its own, or null: the log takes both); answers on its stdout: {"started": pid} or {"error": text} for each
request in order, and {"exited": pid, "returncode": code} whenever a child ends (reaped at once, so a dead server
leaves no zombie behind). CLI commands run to their end the same way (`tests.e2e.forked.run_cli`).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

DISABLE_VARIABLE = "CATALOG_ES_TEST_NO_ZYGOTE"
# What `catalog-es serve` imports lazily on its way to serving (api/cli/serve.py), imported once here.
PRELOAD = (
    "api.cli",
    "uvicorn",
    "api.app",
    "api.encoded_slash",
    "api.logging",
    "api.runtime.asgi",
    "api.runtime.database",
    "api.runtime.front_door",
    "api.runtime.nats",
    "api.runtime.schema_check",
    "api.runtime.secure",
    "api.runtime.serving_record",
    "api.runtime.task_worker",
    "api.runtime.embedded_postgres",
    "projections.registry",
    "projections.relay.metrics",
    "projections.runner",
    # What typer imports only when it parses the command line (~0.1 s of CPU per start otherwise).
    "typer._adapters",
    "typer._click.decorators",
)


def _returncode(status: int) -> int:
    """`Popen.returncode` of a wait status: the exit code, or minus the signal that ended the process."""
    return os.waitstatus_to_exitcode(status)


def _run_child(request: dict[str, Any], wakeup: int) -> None:
    """In the forked child: become `python -m api ARGS` with the request's environment, cwd and log."""
    signal.set_wakeup_fd(-1)
    os.close(wakeup)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    errors = os.open(request.get("stderr") or request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(errors, 2)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    import random  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    random.seed()  # a forked child would otherwise repeat its siblings' random sequence
    tempfile.tempdir = None  # TMPDIR is read again from the new environment
    sys.argv = ["-m", *request["args"]]
    import runpy  # noqa: PLC0415

    runpy._run_module_as_main("api", alter_argv=True)  # type: ignore[attr-defined] - what -m does


def _answer(message: dict[str, Any]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def _warm_up() -> None:
    """Build one app (no lifespan: nothing connects) so each child builds its own with the typing, msgspec and
    Litestar caches already filled (~0.15 s of CPU less per start), then put everything the zygote holds out of the
    collector's sight: the server's own `gc.collect()` at start-up walks only the child's objects (~0.1 s less) and
    touches none of the shared pages, which stay shared with the zygote instead of being copied."""
    import gc  # noqa: PLC0415

    from api.app import create_app  # noqa: PLC0415
    from api.settings import Settings  # noqa: PLC0415

    environment = dict(os.environ)
    try:
        create_app(Settings(), "postgresql://warm-up.invalid/none")
    except Exception:  # settings a child need not share: each child builds its own app (and says why) anyway
        pass
    finally:  # what building an app sets in the environment stays out of the children's (they get their own anyway)
        os.environ.clear()
        os.environ.update(environment)
    gc.collect()
    gc.freeze()


def serve_forks() -> None:
    """The zygote's loop: fork on each request, report each child's end. Returns in a child, to run it."""
    for module in PRELOAD:
        __import__(module)
    _warm_up()
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    pending = b""
    children: set[int] = set()
    while True:
        readable, _, _ = select.select([0, wakeup_read], [], [], 1.0)
        if wakeup_read in readable:
            os.read(wakeup_read, 4096)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.discard(pid)
            _answer({"exited": pid, "returncode": _returncode(status)})
        if 0 not in readable:
            continue
        chunk = os.read(0, 65536)
        if not chunk:  # the test process is gone: leave the servers to their own test's cleanup
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                pid = os.fork()
            except OSError as error:
                _answer({"error": str(error)})
                continue
            if pid == 0:
                os.close(wakeup_read)
                _run_child(request, wakeup_write)
                return
            children.add(pid)
            _answer({"started": pid})


class Zygote:
    """The test process's side: starts the zygote on first use, forks servers through it, tracks their ends."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.server_zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.env,
        )
        self._lock = threading.Lock()
        self._changed = threading.Condition()
        self._started: list[int | str] = []
        self._exited: dict[int, int] = {}
        self._reader = threading.Thread(target=self._read, name="zygote-reader", daemon=True)
        self._reader.start()
        atexit.register(self.close)

    def close(self) -> None:
        """End the zygote (its servers keep running until their tests stop them) and reap it."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            message = json.loads(line)
            with self._changed:
                if "exited" in message:
                    self._exited[message["exited"]] = message["returncode"]
                else:
                    self._started.append(message.get("started") or message["error"])
                self._changed.notify_all()
        with self._changed:
            self._started.append("the zygote exited")
            self._changed.notify_all()

    def alive(self) -> bool:
        return self._process.poll() is None

    def spawn(
        self, args: Sequence[str], env: Mapping[str, str], log: Path, stderr: Path | None = None
    ) -> ForkedProcess:
        """`python -m api ARGS` forked, its stdout (and stderr, unless `stderr` names another file) to `log`."""
        errors = None if stderr is None else str(stderr)
        request = {"args": list(args), "env": dict(env), "cwd": os.getcwd(), "log": str(log), "stderr": errors}
        with self._lock:
            stdin: IO[bytes] | None = self._process.stdin
            assert stdin is not None
            stdin.write((json.dumps(request) + "\n").encode())
            stdin.flush()
            with self._changed:
                self._changed.wait_for(lambda: bool(self._started), timeout=120)
                answer = self._started.pop(0) if self._started else "the zygote did not answer"
        if isinstance(answer, str):
            raise RuntimeError(f"server zygote: {answer}")
        return ForkedProcess(self, answer, [sys.executable, "-m", "api", *args])

    def returncode(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exited or not self.alive(), timeout=timeout)
            return self._exited.get(pid)


class ForkedProcess:
    """The part of `subprocess.Popen` the suite uses, for a server forked by the zygote."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str]) -> None:
        self._zygote = zygote
        self.pid = pid
        self.args = args
        self.returncode: int | None = None
        self.stdin = self.stdout = self.stderr = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.returncode(self.pid, timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._zygote.returncode(self.pid, timeout=timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


if __name__ == "__main__":
    serve_forks()
