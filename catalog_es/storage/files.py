"""Warehouse storage IO: metadata files, emptiness checks and purges (blocking; run off the event loop).

What differs per store lives in its backend (`catalog_es.storage.backends`); this module confines every
location to the warehouse first, then asks the backend.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import msgspec
from cachetools import LRUCache
from pyiceberg.io import FileIO
from pyiceberg.serializers import Compressor

from catalog_es.errors import InvalidLocationError, StorageAccessError
from catalog_es.events import Json
from catalog_es.locations import is_strictly_inside, local_path, location_key, normalize_location
from catalog_es.storage.backends import ForeignLocationError, StorageBackend, backend_for
from catalog_es.storage.file_roots import within
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import StorageCredential, StorageProfile, base_location
from catalog_es.storage.purge import (
    POLICY_FILES_DIR,
    checksum_sidecar,
    referenced_files,
    remove_empty_directories,
    unreferenced,
)
from catalog_es.storage.real_path import strict_real_path

__all__ = ["ForeignLocationError", "WarehouseStorage"]

_REMEMBERED_LOCATIONS = 4096  # per warehouse: the current metadata files of its busiest tables


class WarehouseStorage:
    """Reads and writes one warehouse's files: metadata through pyiceberg's FileIO, listings through
    pyarrow (local files) or boto3 (S3).

    Confined to the warehouse: every operation first checks that its location is on this warehouse's
    storage (a file warehouse touches local files only, an S3 warehouse its own bucket and schemes) and
    lies at or below the warehouse's base location (local paths also once symlinks are resolved), and that
    the endpoint is allowed. So no location a client chose (`set-location`, `write.metadata.path`, a
    registered file) makes the server build a client for another store, use an ambient identity, or follow
    a link out of the warehouse.
    """

    def __init__(
        self,
        profile: StorageProfile,
        credential: StorageCredential | None = None,
        endpoints: EndpointPolicy | None = None,
    ) -> None:
        self.profile = profile  # read by the table responses' remote-signing config
        self.backend: StorageBackend = backend_for(profile, credential, endpoints or EndpointPolicy())
        self._base = base_location(profile)
        self._real_base: str | None = None
        self._own: LRUCache[str, str] = LRUCache(_REMEMBERED_LOCATIONS)  # location → canonical (`_own_location`)
        self._own_lock = threading.Lock()  # used from worker threads
        # What table responses hand to clients for this storage (computed once: loadTable is a hot path).
        self.client_config = self.backend.client_config()

    def confined(self, location: str) -> str:
        """The canonical location, if it is on this warehouse's storage and at or below its base location.

        Raises:
            ForeignLocationError: another scheme or bucket (checked before any IO).
            InvalidLocationError: outside the base location, or a local path a symlink leads out of it.
        """
        canonical = self._own_location(location)
        if canonical.startswith("file://"):
            self._check_real_path(location, os.path.realpath(local_path(canonical)))
        return canonical

    def _own_location(self, location: str) -> str:
        """`confined` but for symlinks: what the location's text alone decides, remembered per location (these
        checks cost more than the stat of a loadTable's metadata file; symlinks are resolved at every use)."""
        with self._own_lock:
            canonical = self._own.get(location)
        if canonical is not None:
            return canonical
        canonical = self._require_own(location)
        same_scheme = location_key(canonical)  # s3a/s3n, wasbs: the warehouse's own spelling
        if same_scheme != self._base and not is_strictly_inside(same_scheme, self._base):
            raise InvalidLocationError(f"Location {location} is outside the warehouse's storage {self._base}")
        with self._own_lock:
            self._own[location] = canonical
        return canonical

    def _check_real_path(self, location: str, real: str) -> None:
        """Raises: InvalidLocationError when a local location's resolved path is not below the base's."""
        if self._real_base is None:
            self._real_base = os.path.realpath(local_path(self._base))
        if not within(real, self._real_base):
            raise InvalidLocationError(f"Location {location} leads out of the warehouse's storage {self._base}")

    def write_metadata(self, location: str, document: Json | bytes) -> None:
        """Write a new metadata file; never overwrites (a name is used once). `document` may be its JSON already.

        Raises:
            FileExistsError: the file exists already.
            StorageAccessError: the storage refused the write.
        """
        self.confined(location)
        encoded = document if isinstance(document, bytes) else msgspec.json.encode(document)
        content = Compressor.get_compressor(location).bytes_compressor()(encoded)
        try:
            path = _local_path(location)
            if path is None:
                with self._file_io(location).new_output(_io_spelling(location)).create(overwrite=False) as stream:
                    stream.write(content)
            else:  # a fifth of pyarrow's cost for what is one small file; "x": never overwrite
                _write_new_file(path, content)
        except FileExistsError:
            raise
        except OSError as exc:
            raise StorageAccessError(
                f"Cannot write metadata file {location}: {self._os_reason(location, exc)}"
            ) from exc

    def read_metadata(self, location: str) -> Json:
        """The metadata document as stored (gzip-compressed files too).

        Raises:
            ForeignLocationError, InvalidLocationError: the location is not in this warehouse (nothing read).
            StorageAccessError: the object store refused the read (a local file's OSError passes through).
        """
        self.confined(location)
        try:
            with self._file_io(location).new_input(_io_spelling(location)).open() as stream:
                raw = Compressor.get_compressor(location).stream_decompressor(stream).read()
        except FileNotFoundError:
            raise
        except OSError as exc:
            if _local_path(location) is not None:
                raise
            raise StorageAccessError(f"Cannot read metadata file {location}: {self._os_reason(location, exc)}") from exc
        document: Json = msgspec.json.decode(raw)
        return document

    @property
    def local(self) -> bool:
        """Whether the warehouse's files are local (every location it accepts is below its `file://` base)."""
        return self._base.startswith("file://")

    def file_missing(self, location: str) -> bool:
        """Whether storage says for certain that no file is at the location (one stat or HEAD).

        An answer other than "not found" (the store unreachable, access refused) is not a missing file.
        """
        canonical = self._own_location(location)
        if canonical.startswith("file://"):
            return self._local_file_missing(location, _local_file_path(canonical))
        try:
            return not self._file_io(location).new_input(_io_spelling(canonical)).exists()
        except Exception:
            return False

    def _local_file_missing(self, location: str, path: str) -> bool:
        """One resolution of the path answers both where it leads (confinement) and whether a file is there."""
        try:
            real = strict_real_path(path)
        except (FileNotFoundError, NotADirectoryError):
            self._check_real_path(location, os.path.realpath(path))
            return True
        except OSError:  # e.g. access refused: not a missing file
            self.confined(location)
            return False
        self._check_real_path(location, real)
        return False

    def delete_file(self, location: str) -> None:
        """Delete one file (on an object store without leaving a directory marker in its place).

        Raises:
            StorageAccessError: the store refused the deletion.
        """
        self.confined(location)
        self.backend.delete_file(_io_spelling(location))

    def remove_empty_parents(self, location: str, levels: int = 2) -> None:
        """Remove up to `levels` local directories above a file while they are empty (a failed write's
        `metadata/` and new table directory), never the warehouse's base directory or anything above it."""
        canonical = self.confined(location)
        if _local_path(canonical) is None:
            return  # object stores have no directories
        directory = os.path.dirname(local_path(canonical))
        base = local_path(self._base)
        for _ in range(levels):
            if not is_strictly_inside(directory, base):
                return
            try:
                os.rmdir(directory)
            except OSError:
                return  # not empty (or gone): the directories above are not ours to remove
            directory = os.path.dirname(directory)

    def is_empty(self, location: str) -> bool:
        """Whether no file is stored at or below the location (empty directories, as a staged create
        leaves them, do not count).

        Raises:
            StorageAccessError: the store cannot be listed.
        """
        return self.backend.is_empty(self.confined(location))

    def files_below(self, location: str) -> list[str]:
        """The files at or below a location, as paths relative to it (directories do not count).

        Raises:
            StorageAccessError: the store cannot be listed.
        """
        return self.backend.files_below(self.confined(location))

    def foreign_files(self, location: str, metadata_location: str, metadata: Json) -> list[str]:
        """The files at or below a table's new location that the metadata about to be committed does not
        reference, relative to it: what a replace transaction's own manifests and data files leave over.

        Raises:
            StorageAccessError: the store cannot be listed.
        """
        own = location_key(self.confined(location))
        references = [
            location_key(self.confined(path)) for path in self._referenced(location, metadata_location, metadata)
        ]
        return unreferenced(self.files_below(location), references, own)

    def make_directories(self, locations: list[str]) -> None:
        """Create local directories (a no-op on object stores, which have none).

        Engines that write a staged table's first files directly, as DuckDB does, expect the
        table's directories to exist on a local filesystem; nothing else would create them.
        """
        for location in locations:
            path = _local_path(normalize_location(location))
            if path is not None:
                try:
                    path.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StorageAccessError(f"Cannot create directory {location}: {exc}") from exc

    def purge(self, location: str) -> None:
        """Delete everything at and below the location (not used for tables: see `purge_table`).

        Raises:
            StorageAccessError: the store refused a listing or a deletion.
        """
        self.backend.purge(self.confined(location))

    def purge_table(self, location: str, metadata_location: str, metadata: Json) -> list[str]:
        """Delete the files a dropped table's metadata references inside its own location; return them.

        What the catalog knows belongs to a table is what its metadata chain references (metadata files,
        manifest lists, manifests, data and delete files, statistics) and lies inside the location it
        claimed; nothing else there is deleted, so a directory that was not empty or not the table's
        alone (a registered table's, say) keeps what others put in it. Afterwards local directories left
        empty below the location go too. Best effort per file, as pyiceberg's own purge: a file that
        cannot be read or deleted is skipped.

        Raises:
            InvalidLocationError: the table's location is outside the warehouse (nothing is touched).
        """
        deleted = []
        for path in self.purge_plan(location, metadata_location, metadata):
            if self.delete_quietly(path):
                deleted.append(path)
        self.finish_purge(location)
        return deleted

    def purge_plan(self, location: str, metadata_location: str, metadata: Json) -> list[str]:
        """The files `purge_table` deletes, in its order (data first, the current metadata file last, then the Hadoop
        checksum sidecars found beside local ones), so a purge interrupted part way can resume from an index into
        the same list.

        Raises:
            InvalidLocationError: the table's location is outside the warehouse.
        """
        own = self.confined(location)
        referenced = [*self._policy_files(own), *self._referenced(location, metadata_location, metadata)]
        if _local_path(own) is None:
            return referenced
        # Spark on a local filesystem (Hadoop's checksummed one) leaves `.name.crc` beside each file it wrote:
        # the sidecar goes with its file, or it keeps the table's directories alive.
        sidecars = (checksum_sidecar(path) for path in referenced)
        return [*referenced, *(path for path in sidecars if self._local_file_exists(path))]

    def _referenced(self, location: str, metadata_location: str, metadata: Json) -> list[str]:
        own = self.confined(location)
        return referenced_files(self._file_io(location), metadata_location, metadata, self._inside(own))

    def _policy_files(self, own: str) -> list[str]:
        """The catalog's own copies of the table's files for read policies (`<table>/policy-files/`, issue 33):
        rows of the table, so they go with it. None when they cannot be listed (best effort, as a purge is)."""
        directory = f"{own.rstrip('/')}/{POLICY_FILES_DIR}"
        try:
            return [f"{directory}/{name}" for name in sorted(self.files_below(directory))]
        except (StorageAccessError, OSError, InvalidLocationError):
            return []

    def _local_file_exists(self, location: str) -> bool:
        try:
            return os.path.isfile(local_path(self.confined(location)))
        except InvalidLocationError:
            return False

    def delete_quietly(self, path: str) -> bool:
        """Delete one file of a purge; False when it could not be (gone already, refused): best effort."""
        try:
            self.delete_file(path)
        except (OSError, StorageAccessError, InvalidLocationError):
            return False
        return True

    def finish_purge(self, location: str) -> None:
        """After a purge: remove the local directories left empty at and below the table's location."""
        own = self.confined(location)
        if _local_path(own) is not None:
            remove_empty_directories(local_path(own))

    def _inside(self, own: str) -> Callable[[str], bool]:
        def inside(path: str) -> bool:
            try:
                return is_strictly_inside(self.confined(path), own)
            except InvalidLocationError:
                return False

        return inside

    def file_io(self, location: str) -> FileIO:
        """pyiceberg's FileIO for a location on this storage (blocking: checks the endpoint).

        Raises:
            ForeignLocationError: the location is not on this warehouse's storage.
            EndpointNotAllowedError: the profile's endpoint is refused.
        """
        self.confined(location)
        return self._file_io(location)

    def _require_own(self, location: str) -> str:
        """The canonical location, if it is on this warehouse's storage; checked before any IO."""
        try:
            canonical = normalize_location(location)
        except InvalidLocationError as exc:
            raise ForeignLocationError(str(exc)) from None
        self.backend.check_own(location, canonical)
        return canonical

    def _file_io(self, location: str) -> FileIO:
        return self.backend.file_io(location)

    def _os_reason(self, location: str, exc: OSError) -> str:
        """A local file's OSError as is; for an object store the SDK's error name only (text logged)."""
        return str(exc) if _local_path(location) is not None else self.backend.failure_reason(location, exc)


@lru_cache(maxsize=_REMEMBERED_LOCATIONS)  # loadTable's stat of the current metadata file: its path, not re-parsed
def _local_file_path(canonical: str) -> str:
    return local_path(canonical)


def _local_path(location: str) -> Path | None:
    """The local file a `file:` (or scheme-less absolute) location names; None for object stores."""
    parts = urlsplit(location)
    if parts.scheme == "file" or (not parts.scheme and location.startswith("/")):
        return Path(unquote(parts.path))
    return None


def _write_new_file(path: Path, content: bytes) -> None:
    """Create the file (never overwriting it) with `content`; its directories only when missing (a table's first
    metadata file): the table's later files take one `open`, no `mkdir` and `stat` before it."""
    try:
        file = path.open("xb")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        file = path.open("xb")
    with file:
        file.write(content)


def _io_spelling(location: str) -> str:
    """`wasbs://fs@a.blob.…` as `abfss://fs@a.dfs.…`: pyiceberg's adlfs FileIO knows only the latter."""
    return location_key(location) if urlsplit(location).scheme == "wasbs" else location
