"""Where a running `serve` listens, recorded in its data dir so that the operator CLI reaches that very server."""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections.abc import Iterator
from pathlib import Path

import msgspec
import structlog

RECORD_NAME = "serving.json"

_log = structlog.get_logger(__name__)


class ServingRecord(msgspec.Struct, frozen=True):
    """The catalog URI a client on this host uses, and the process that serves it."""

    catalog_uri: str
    pid: int


def local_catalog_uri(host: str, port: int) -> str:
    """The `/catalog` URI on this host of a server listening on `host`: a wildcard address is reached on loopback."""
    if host in ("", "0.0.0.0"):  # noqa: S104 - the wildcard is compared, not bound
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    return f"http://{host}:{port}/catalog"


@contextlib.contextmanager
def serving_recorded(data_path: Path, catalog_uri: str) -> Iterator[None]:
    """Record this process as serving `catalog_uri` for as long as the block runs (the record goes afterwards).

    Best effort: a data dir that cannot be written (a read-only container) leaves the CLI to `--catalog-uri`.
    """
    record = data_path / RECORD_NAME
    partial = record.with_name(f".{RECORD_NAME}.{os.getpid()}")
    try:
        data_path.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(msgspec.json.encode(ServingRecord(catalog_uri=catalog_uri, pid=os.getpid())))
        partial.replace(record)  # atomic: a reader sees the old record or the new one
    except OSError as exc:
        _log.warning("cannot record where the server listens", data_dir=str(data_path), error=str(exc))
    try:
        yield
    finally:
        if recorded_server(data_path) == ServingRecord(catalog_uri=catalog_uri, pid=os.getpid()):
            record.unlink(missing_ok=True)


def recorded_server(data_path: Path) -> ServingRecord | None:
    """The record of the `serve` running on this data dir; None without one, or when its process is gone."""
    try:
        record = msgspec.json.decode((data_path / RECORD_NAME).read_bytes(), type=ServingRecord)
    except (OSError, msgspec.DecodeError):
        return None
    return record if _alive(record.pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it exists
    return True
