"""Warehouse storage IO: metadata files, emptiness checks and purges (blocking; run off the event loop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import msgspec
import pyarrow.fs as pafs
from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.serializers import Compressor

from catalog_es.errors import StorageAccessError
from catalog_es.events import Json
from catalog_es.locations import normalize_location
from catalog_es.storage_access import describe, reason, s3_client
from catalog_es.storage_profiles import (
    S3Profile,
    StorageCredential,
    StorageProfile,
    client_config,
    fileio_properties,
)

_S3_SCHEMES = ("s3", "s3a", "s3n")
_DELETE_BATCH = 1000  # the most keys one DeleteObjects request takes


class WarehouseStorage:
    """Reads and writes one warehouse's files: metadata through pyiceberg's FileIO, listings through
    pyarrow (local files) or boto3 (S3). Without a profile it serves local files only."""

    def __init__(self, profile: StorageProfile | None = None, credential: StorageCredential | None = None) -> None:
        self._profile = profile
        self._credential = credential
        self._properties = fileio_properties(profile, credential) if profile is not None else {}
        # What table responses hand to clients for this storage (computed once: loadTable is a hot path).
        self.client_config = client_config(profile, credential) if profile is not None else {}
        self._io: FileIO | None = None
        self._s3: Any = None

    def write_metadata(self, location: str, document: Json) -> None:
        """Write a new metadata file; never overwrites (a name is used once).

        Raises:
            FileExistsError: the file exists already.
            StorageAccessError: the storage refused the write.
        """
        content = Compressor.get_compressor(location).bytes_compressor()(msgspec.json.encode(document))
        try:
            path = _local_path(location)
            if path is None:
                with self._file_io(location).new_output(location).create(overwrite=False) as stream:
                    stream.write(content)
            else:  # a fifth of pyarrow's cost for what is one small file; "x": never overwrite
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("xb") as file:
                    file.write(content)
        except FileExistsError:
            raise
        except OSError as exc:
            raise StorageAccessError(f"Cannot write metadata file {location}: {exc}") from exc

    def read_metadata(self, location: str) -> Json:
        """The metadata document as stored (gzip-compressed files too)."""
        with self._file_io(location).new_input(location).open() as stream:
            document: Json = msgspec.json.decode(Compressor.get_compressor(location).stream_decompressor(stream).read())
        return document

    def delete_file(self, location: str) -> None:
        """Delete one file; on S3 through boto3, as pyarrow would leave a directory marker in its place.

        Raises:
            StorageAccessError: the S3 store refused the deletion.
        """
        canonical = normalize_location(location)
        if not _is_s3(canonical):
            self._file_io(location).delete(location)
            return
        bucket, key = _bucket_key(canonical)
        try:
            self._client(canonical).delete_object(Bucket=bucket, Key=key)
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("delete", canonical, exc) from exc

    def is_empty(self, location: str) -> bool:
        """Whether no file is stored at or below the location (empty directories, as a staged create
        leaves them, do not count).

        Raises:
            StorageAccessError: the S3 store cannot be listed.
        """
        canonical = normalize_location(location)
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
        """Delete everything at and below the location.

        Raises:
            StorageAccessError: the S3 store refused a listing or a deletion.
        """
        canonical = normalize_location(location)
        if _is_s3(canonical):
            self._s3_purge(canonical)
            return
        filesystem, path = pafs.FileSystem.from_uri(canonical)
        if filesystem.get_file_info(path).type != pafs.FileType.NotFound:
            filesystem.delete_dir(path)

    def _file_io(self, location: str) -> FileIO:
        if self._io is None:
            self._io = load_file_io(self._properties, location)
        return self._io

    def _s3_profile(self, location: str) -> S3Profile:
        if not isinstance(self._profile, S3Profile):
            raise StorageAccessError(f"Location {location} is on S3 but the warehouse has no S3 storage profile")
        return self._profile

    def _client(self, location: str) -> Any:
        if self._s3 is None:
            self._s3 = s3_client(self._s3_profile(location), self._credential)
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
                        f"Cannot delete s3://{bucket}/{error.get('Key')} in {describe(self._s3_profile(location))}: "
                        f"{error.get('Code')}: {error.get('Message')} ({len(answer['Errors'])} keys failed)"
                    )
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("purge", location, exc) from exc

    def _failure(self, action: str, location: str, exc: Exception) -> StorageAccessError:
        return StorageAccessError(
            f"Cannot {action} {location} in {describe(self._s3_profile(location))}: {reason(exc)}"
        )


def _local_path(location: str) -> Path | None:
    """The local file a `file:` (or scheme-less absolute) location names; None for object stores."""
    parts = urlsplit(location)
    if parts.scheme == "file" or (not parts.scheme and location.startswith("/")):
        return Path(unquote(parts.path))
    return None


def _is_s3(location: str) -> bool:
    return urlsplit(location).scheme in _S3_SCHEMES


def _bucket_key(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    return parts.netloc, parts.path.strip("/")
