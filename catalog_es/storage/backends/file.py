"""The local-filesystem backend: a `file` warehouse's directory (embedded mode and tests)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import pyarrow.fs as pafs
from pyiceberg.io import FileIO, load_file_io

from catalog_es.errors import StorageAccessError
from catalog_es.locations import local_path
from catalog_es.storage.access_delegation import DelegationMode
from catalog_es.storage.backends.base import ForeignLocationError, Store, VendedConfig, setup_digest
from catalog_es.storage.profiles import FileProfile, base_location
from catalog_es.storage.session_policy import AccessLevel

_PROBE_BODY: Final = b"catalog-es storage access probe\n"


class FileBackend:
    """A directory on the server's own disk: nothing to vend or sign (clients share the disk)."""

    store: Store = "file"
    signer = None

    def __init__(self, profile: FileProfile) -> None:
        self._profile = profile
        self.setup = setup_digest(profile, None)
        self._io: FileIO | None = None

    def describe(self) -> str:
        return f"directory {local_path(base_location(self._profile))}"

    def check_own(self, location: str, canonical: str) -> None:
        if urlsplit(canonical).scheme != "file":
            raise ForeignLocationError(f"Location {location} is not in this warehouse's storage (local files)")

    def file_io(self, location: str) -> FileIO:
        if self._io is None:
            self._io = load_file_io({"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}, location)
        return self._io

    def delete_file(self, location: str) -> None:
        self.file_io(location).delete(location)

    def is_empty(self, location: str) -> bool:
        filesystem, path = pafs.FileSystem.from_uri(location)
        info = filesystem.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return True
        if info.type == pafs.FileType.File:
            return False
        listing = filesystem.get_file_info(pafs.FileSelector(path, recursive=True))
        return not any(entry.type != pafs.FileType.Directory for entry in listing)

    def files_below(self, location: str) -> list[str]:
        filesystem, path = pafs.FileSystem.from_uri(location)
        listing = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        return [os.path.relpath(entry.path, path) for entry in listing if entry.type != pafs.FileType.Directory]

    def purge(self, location: str) -> None:
        filesystem, path = pafs.FileSystem.from_uri(location)
        if filesystem.get_file_info(path).type != pafs.FileType.NotFound:
            filesystem.delete_dir(path)

    def probe(self) -> None:
        """Create the directory if missing, then write, read back and delete a probe file in it."""
        path = local_path(base_location(self._profile))
        probe = Path(path) / f".catalog-es-probe-{uuid.uuid4().hex}"
        try:
            probe.parent.mkdir(parents=True, exist_ok=True)
            probe.write_bytes(_PROBE_BODY)
            try:
                if probe.read_bytes() != _PROBE_BODY:
                    raise StorageAccessError(f"Storage access check failed for directory {path}: read back other bytes")
            finally:
                probe.unlink()
        except OSError as exc:
            raise StorageAccessError(
                f"Storage access check failed for directory {path}: {exc.strerror or exc} ({type(exc).__name__})"
            ) from exc

    def failure_reason(self, location: str, exc: OSError) -> str:
        return str(exc)

    def client_config(self) -> dict[str, str]:
        return {}

    def vends(self, modes: frozenset[DelegationMode]) -> bool:
        return False

    def vending(self, location: str, level: AccessLevel, principal_id: str) -> Callable[[], VendedConfig]:
        raise StorageAccessError("A file warehouse vends no credentials")
