"""Where `serve` listens, as the CLI reads it from the data dir: loopback for a wildcard, nothing for a dead server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from api.runtime.serving_record import (
    RECORD_NAME,
    ServingRecord,
    local_catalog_uri,
    recorded_server,
    serving_recorded,
)


@pytest.mark.parametrize(
    ("host", "uri"),
    [
        ("127.0.0.1", "http://127.0.0.1:9000/catalog"),
        ("0.0.0.0", "http://127.0.0.1:9000/catalog"),
        ("::", "http://[::1]:9000/catalog"),
        ("::1", "http://[::1]:9000/catalog"),
        ("catalog.internal", "http://catalog.internal:9000/catalog"),
    ],
)
def test_local_catalog_uri_reaches_a_wildcard_listener_on_loopback(host: str, uri: str) -> None:
    assert local_catalog_uri(host, 9000) == uri


def test_record_is_read_while_recorded_and_gone_afterwards(tmp_path: Path) -> None:
    with serving_recorded(tmp_path, "http://127.0.0.1:9000/catalog"):
        assert recorded_server(tmp_path) == ServingRecord("http://127.0.0.1:9000/catalog", os.getpid())
    assert recorded_server(tmp_path) is None
    assert not (tmp_path / RECORD_NAME).exists()


def test_record_of_a_process_that_is_gone_is_not_a_running_server(tmp_path: Path) -> None:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    dead = ServingRecord("http://127.0.0.1:9000/catalog", int(finished.stdout))
    (tmp_path / RECORD_NAME).write_bytes(msgspec.json.encode(dead))
    assert recorded_server(tmp_path) is None
