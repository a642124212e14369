"""Warehouse storage IO: metadata files, emptiness checks and purges (blocking; run off the event loop)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import msgspec
import pyarrow.fs as pafs
from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.serializers import Compressor

from catalog_es.errors import InvalidLocationError, StorageAccessError
from catalog_es.events import Json
from catalog_es.locations import is_strictly_inside, local_path, location_key, normalize_location
from catalog_es.storage.adls import AdlsProfile, adls_account_host
from catalog_es.storage.file_roots import within
from catalog_es.storage.gcs import GcsProfile
from catalog_es.storage.object_stores import ObjectStoreIO, object_store_io
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import (
    S3AccessKeyCredential,
    S3Profile,
    StorageCredential,
    StorageProfile,
    base_location,
    client_config,
    fileio_properties,
    location_schemes,
)
from catalog_es.storage.purge import checksum_sidecar, referenced_files, remove_empty_directories, unreferenced
from catalog_es.storage.s3 import describe, reason, s3_client, safe_code

_S3_SCHEMES = ("s3", "s3a", "s3n")
_DELETE_BATCH = 1000  # the most keys one DeleteObjects request takes
# pyarrow's S3 errors read "AWS Error ACCESS_DENIED during PutObject operation: <the endpoint's message>":
# the SDK's own error name is safe to show, the rest is the endpoint's text.
_AWS_SDK_ERROR: Final = re.compile(r"AWS Error (\[code \d+\]|[A-Z_]+)")


class ForeignLocationError(InvalidLocationError, StorageAccessError):
    """A location on another storage than the warehouse's (scheme or bucket): refused before any IO."""


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
        self._profile = profile
        self.profile = profile  # read by the table responses' remote-signing config
        self._credential = credential
        self._endpoints = endpoints or EndpointPolicy()
        self._base = base_location(profile)
        self._real_base: str | None = None
        self._properties = fileio_properties(profile, credential)
        # What table responses hand to clients for this storage (computed once: loadTable is a hot path).
        self.client_config = client_config(profile, credential)
        self._io: FileIO | None = None
        self._s3: Any = None
        self._store: ObjectStoreIO | None = object_store_io(profile, credential, self._endpoints)  # ADLS, GCS

    def confined(self, location: str) -> str:
        """The canonical location, if it is on this warehouse's storage and at or below its base location.

        Raises:
            ForeignLocationError: another scheme or bucket (checked before any IO).
            InvalidLocationError: outside the base location, or a local path a symlink leads out of it.
        """
        canonical = self._require_own(location)
        same_scheme = location_key(canonical)  # s3a/s3n, wasbs: the warehouse's own spelling
        if same_scheme != self._base and not is_strictly_inside(same_scheme, self._base):
            raise InvalidLocationError(f"Location {location} is outside the warehouse's storage {self._base}")
        if canonical.startswith("file://"):
            if self._real_base is None:
                self._real_base = os.path.realpath(local_path(self._base))
            if not within(os.path.realpath(local_path(canonical)), self._real_base):
                raise InvalidLocationError(f"Location {location} leads out of the warehouse's storage {self._base}")
        return canonical

    def write_metadata(self, location: str, document: Json) -> None:
        """Write a new metadata file; never overwrites (a name is used once).

        Raises:
            FileExistsError: the file exists already.
            StorageAccessError: the storage refused the write.
        """
        self.confined(location)
        content = Compressor.get_compressor(location).bytes_compressor()(msgspec.json.encode(document))
        try:
            path = _local_path(location)
            if path is None:
                with self._file_io(location).new_output(_io_spelling(location)).create(overwrite=False) as stream:
                    stream.write(content)
            else:  # a fifth of pyarrow's cost for what is one small file; "x": never overwrite
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("xb") as file:
                    file.write(content)
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

    def file_missing(self, location: str) -> bool:
        """Whether storage says for certain that no file is at the location (one stat or HEAD).

        An answer other than "not found" (the store unreachable, access refused) is not a missing file.
        """
        canonical = self.confined(location)
        try:
            return not self._file_io(location).new_input(_io_spelling(canonical)).exists()
        except Exception:
            return False

    def delete_file(self, location: str) -> None:
        """Delete one file; on S3 through boto3, as pyarrow would leave a directory marker in its place.

        Raises:
            StorageAccessError: the S3 store refused the deletion.
        """
        canonical = self.confined(location)
        if not _is_s3(canonical):
            self._file_io(location).delete(_io_spelling(location))
            return
        bucket, key = _bucket_key(canonical)
        try:
            self._client(canonical).delete_object(Bucket=bucket, Key=key)
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("delete", canonical, exc) from exc

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
            StorageAccessError: the S3 store cannot be listed.
        """
        canonical = self.confined(location)
        if self._store is not None:
            return self._store.is_empty(canonical)
        if _is_s3(canonical):
            return self._s3_is_empty(canonical)
        filesystem, path = pafs.FileSystem.from_uri(canonical)
        info = filesystem.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return True
        if info.type == pafs.FileType.File:
            return False
        listing = filesystem.get_file_info(pafs.FileSelector(path, recursive=True))
        return not any(entry.type != pafs.FileType.Directory for entry in listing)

    def files_below(self, location: str) -> list[str]:
        """The files at or below a location, as paths relative to it (directories do not count).

        Raises:
            StorageAccessError: the store cannot be listed.
        """
        canonical = self.confined(location)
        if self._store is not None:
            return self._store.files_below(canonical)
        if _is_s3(canonical):
            return self._s3_files_below(canonical)
        filesystem, path = pafs.FileSystem.from_uri(canonical)
        listing = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        return [os.path.relpath(entry.path, path) for entry in listing if entry.type != pafs.FileType.Directory]

    def foreign_files(self, location: str, metadata_location: str, metadata: Json) -> list[str]:
        """The files at or below a table's new location that the metadata about to be committed does not
        reference, relative to it: what a replace transaction's own manifests and data files leave over.

        Raises:
            StorageAccessError: the store cannot be listed.
        """
        own = location_key(self.confined(location))
        references = [
            location_key(self.confined(path)) for path in self.purge_plan(location, metadata_location, metadata)
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
            StorageAccessError: the S3 store refused a listing or a deletion.
        """
        canonical = self.confined(location)
        if self._store is not None:
            self._store.purge(canonical)
            return
        if _is_s3(canonical):
            self._s3_purge(canonical)
            return
        filesystem, path = pafs.FileSystem.from_uri(canonical)
        if filesystem.get_file_info(path).type != pafs.FileType.NotFound:
            filesystem.delete_dir(path)

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
        referenced = referenced_files(self._file_io(location), metadata_location, metadata, self._inside(own))
        if _local_path(own) is None:
            return referenced
        # Spark on a local filesystem (Hadoop's checksummed one) leaves `.name.crc` beside each file it wrote:
        # the sidecar goes with its file, or it keeps the table's directories alive.
        sidecars = (checksum_sidecar(path) for path in referenced)
        return [*referenced, *(path for path in sidecars if self._local_file_exists(path))]

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
        parts = urlsplit(canonical)
        if isinstance(self._profile, S3Profile):
            if parts.scheme not in location_schemes(self._profile) or parts.netloc != self._profile.bucket:
                raise ForeignLocationError(
                    f"Location {location} is not in this warehouse's storage (bucket {self._profile.bucket!r})"
                )
        elif isinstance(self._profile, AdlsProfile | GcsProfile):
            own = (
                f"{self._profile.filesystem}@{adls_account_host(self._profile)}"
                if isinstance(self._profile, AdlsProfile)
                else self._profile.bucket
            )
            if parts.scheme not in location_schemes(self._profile) or urlsplit(location_key(canonical)).netloc != own:
                raise ForeignLocationError(f"Location {location} is not in this warehouse's storage ({own})")
        elif parts.scheme != "file":
            raise ForeignLocationError(f"Location {location} is not in this warehouse's storage (local files)")
        return canonical

    def _file_io(self, location: str) -> FileIO:
        if self._store is not None:
            return self._store.file_io()
        if self._io is None:
            if isinstance(self._profile, S3Profile):
                self._endpoints.check(self._profile.endpoint)
                properties = self._properties
                if self._credential is None:  # never pyarrow's default chain: unsigned requests
                    properties = {**properties, "s3.anonymous": "true"}
                self._io = load_file_io(properties, location)
            else:
                self._io = load_file_io({"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}, location)
        return self._io

    def _os_reason(self, location: str, exc: OSError) -> str:
        """A local file's OSError as is; for an object store the SDK's error name only (text logged)."""
        if _local_path(location) is not None:
            return str(exc)
        reason(exc, location)  # logs the details
        found = _AWS_SDK_ERROR.search(str(exc))
        if self._store is not None:
            return f"storage error in {self._store.describe()}"
        where = describe(self._profile) if isinstance(self._profile, S3Profile) else "object storage"
        return f"storage error in {where}" + (f" ({found.group(1)})" if found else "")

    def _s3_profile(self, location: str) -> S3Profile:
        if not isinstance(self._profile, S3Profile):
            raise StorageAccessError(f"Location {location} is on S3 but the warehouse has no S3 storage profile")
        return self._profile

    def _client(self, location: str) -> Any:
        if self._s3 is None:
            credential = self._credential if isinstance(self._credential, S3AccessKeyCredential) else None
            self._s3 = s3_client(self._s3_profile(location), credential, self._endpoints)
        return self._s3

    def _s3_is_empty(self, location: str) -> bool:
        client, (bucket, key) = self._client(location), _bucket_key(location)
        try:
            below = client.list_objects_v2(Bucket=bucket, Prefix=f"{key}/", MaxKeys=1)
            if below.get("KeyCount", 0) > 0:
                return False
            exact = client.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("list", location, exc) from exc
        return not any(item["Key"] == key for item in exact.get("Contents", []))

    def _s3_files_below(self, location: str) -> list[str]:
        client, (bucket, key) = self._client(location), _bucket_key(location)
        try:
            pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{key}/")
            return [item["Key"].removeprefix(f"{key}/") for page in pages for item in page.get("Contents", [])]
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("list", location, exc) from exc

    def _s3_purge(self, location: str) -> None:
        client, (bucket, key) = self._client(location), _bucket_key(location)
        try:
            keys = [key] if key else []
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{key}/"):
                keys.extend(item["Key"] for item in page.get("Contents", []))
            for start in range(0, len(keys), _DELETE_BATCH):
                batch = [{"Key": name} for name in keys[start : start + _DELETE_BATCH]]
                answer = client.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
                if answer.get("Errors"):
                    error = answer["Errors"][0]
                    raise StorageAccessError(
                        f"Cannot purge {location} in {describe(self._s3_profile(location))}: "
                        f"{safe_code(error.get('Code'))} ({len(answer['Errors'])} keys failed)"
                    )
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("purge", location, exc) from exc

    def _failure(self, action: str, location: str, exc: Exception) -> StorageAccessError:
        return StorageAccessError(
            f"Cannot {action} {location} in {describe(self._s3_profile(location))}: {reason(exc, location)}"
        )


def _local_path(location: str) -> Path | None:
    """The local file a `file:` (or scheme-less absolute) location names; None for object stores."""
    parts = urlsplit(location)
    if parts.scheme == "file" or (not parts.scheme and location.startswith("/")):
        return Path(unquote(parts.path))
    return None


def _io_spelling(location: str) -> str:
    """`wasbs://fs@a.blob.…` as `abfss://fs@a.dfs.…`: pyiceberg's adlfs FileIO knows only the latter."""
    return location_key(location) if urlsplit(location).scheme == "wasbs" else location


def _is_s3(location: str) -> bool:
    return urlsplit(location).scheme in _S3_SCHEMES


def _bucket_key(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    return parts.netloc, parts.path.strip("/")
