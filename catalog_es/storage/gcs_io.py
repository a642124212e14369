"""The catalog's own IO on a GCS warehouse (pyarrow's GCS filesystem over the JSON API): metadata, listings, purges."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Final
from urllib.parse import urlsplit

import pyarrow.fs as pafs
import structlog
from pyiceberg.io import FileIO, load_file_io

from catalog_es.errors import StorageAccessError
from catalog_es.storage.gcs import GcsCredential, GcsProfile, gcs_object_name
from catalog_es.storage.gcs_auth import access_token, source_credentials
from catalog_es.storage.outbound import EndpointPolicy

_PROBE_BODY: Final = b"catalog-es storage access probe\n"
_RENEW_BEFORE: Final = timedelta(minutes=5)
_RETRY: Final = timedelta(seconds=20)
_PROBE_RETRY: Final = timedelta(seconds=2)  # a token this close to expiry is replaced before the next request
_log = structlog.get_logger(__name__)


class GcsIO:
    """One GCS warehouse's objects. pyarrow is given the catalog's own token, never left to find one."""

    def __init__(self, profile: GcsProfile, credential: GcsCredential | None, endpoints: EndpointPolicy) -> None:
        self._profile = profile
        self._credential = credential
        self._endpoints = endpoints
        self._expires: datetime | None = None
        self._token: tuple[str, datetime] | None = None
        self._filesystem: pafs.GcsFileSystem | None = None
        self._io: FileIO | None = None

    def describe(self) -> str:
        """Bucket and endpoint, for error messages."""
        return f"bucket {self._profile.bucket!r} at {self._profile.endpoint or 'Google Cloud Storage'}"

    def file_io(self) -> FileIO:
        """pyiceberg's pyarrow FileIO with a current token (renewed shortly before it expires)."""
        self._renew()
        assert self._io is not None
        return self._io

    def is_empty(self, location: str) -> bool:
        """Whether no object lies at or below the location."""
        path = self._path(location)
        try:
            filesystem = self._current()
            if filesystem.get_file_info(path).type == pafs.FileType.File:
                return False
            listing = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        except OSError as exc:
            raise self._failure("list", location, exc) from exc
        return not any(entry.type == pafs.FileType.File for entry in listing)

    def files_below(self, location: str) -> list[str]:
        """The objects at or below the location, as paths relative to it."""
        path = self._path(location)
        try:
            listing = self._current().get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        except OSError as exc:
            raise self._failure("list", location, exc) from exc
        return [entry.path.removeprefix(f"{path}/") for entry in listing if entry.type == pafs.FileType.File]

    def purge(self, location: str) -> None:
        """Delete every object at and below the location."""
        path = self._path(location)
        try:
            filesystem = self._current()
            listing = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
            for entry in [*listing, filesystem.get_file_info(path)]:
                if entry.type == pafs.FileType.File:
                    filesystem.delete_file(entry.path)
        except OSError as exc:
            raise self._failure("purge", location, exc) from exc

    def probe(self) -> None:
        """Write, read back and delete an object under the key prefix.

        Raises:
            StorageAccessError: a step failed or read back other bytes.
            EndpointNotAllowedError: the endpoint is refused (before any connection).
        """
        self._renew()
        assert self._token is not None
        filesystem = self._new_filesystem(*self._token, retry=_PROBE_RETRY)  # fail fast on a dead endpoint
        name = "/".join(part for part in (self._profile.key_prefix, f".catalog-es-probe-{uuid.uuid4().hex}") if part)
        path, step, written = f"{self._profile.bucket}/{name}", "write", False
        try:
            with filesystem.open_output_stream(path) as stream:
                stream.write(_PROBE_BODY)
            written, step = True, "read"
            with filesystem.open_input_stream(path) as stream:
                body = stream.read()
            if body != _PROBE_BODY:
                raise StorageAccessError(f"Storage access check failed for {self.describe()}: read back other bytes")
            step = "delete"
            filesystem.delete_file(path)
            written = False
        except OSError as exc:
            raise StorageAccessError(
                f"Storage access check failed for {self.describe()}: cannot {step} {name}: {reason(exc, name)}"
            ) from exc
        finally:
            if written:
                _delete_quietly(filesystem, path)

    def _current(self) -> pafs.GcsFileSystem:
        self._renew()
        assert self._filesystem is not None
        return self._filesystem

    def _renew(self) -> None:
        if self._expires is not None and datetime.now(UTC) < self._expires - _RENEW_BEFORE:
            return
        self._endpoints.check(self._profile.endpoint)  # None: Google's own endpoint
        token, expires = access_token(source_credentials(self._credential))
        self._filesystem = self._new_filesystem(token, expires, retry=_RETRY)
        properties = {
            "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
            "gcs.oauth2.token": token,
            "gcs.oauth2.token-expires-at": str(int(expires.timestamp() * 1000)),
        }
        if self._profile.endpoint:
            properties["gcs.service.host"] = self._profile.endpoint
        self._io = load_file_io(properties, f"gs://{self._profile.bucket}")
        self._expires, self._token = expires, (token, expires)

    def _new_filesystem(self, token: str, expires: datetime, *, retry: timedelta) -> pafs.GcsFileSystem:
        endpoint = urlsplit(self._profile.endpoint) if self._profile.endpoint else None
        arguments: dict[str, object] = {"access_token": token, "credential_token_expiration": expires}
        if endpoint is not None:
            arguments |= {"scheme": endpoint.scheme, "endpoint_override": endpoint.netloc}
        return pafs.GcsFileSystem(retry_time_limit=retry, **arguments)

    def _path(self, location: str) -> str:
        return f"{self._profile.bucket}/{gcs_object_name(location)}".rstrip("/")

    def _failure(self, action: str, location: str, exc: Exception) -> StorageAccessError:
        return StorageAccessError(f"Cannot {action} {location} in {self.describe()}: {reason(exc, location)}")


def reason(exc: Exception, location: str = "") -> str:
    """A fixed phrase: the kind of failure only, never the service's text (logged instead)."""
    _log.warning("storage request failed", location=location, error=repr(exc))
    text = str(exc)
    for marker, phrase in (
        ("Permission", "permission denied"),
        ("PERMISSION_DENIED", "permission denied"),
        ("NOT_FOUND", "not found"),
        ("Not Found", "not found"),
        ("UNAVAILABLE", "Could not connect to the endpoint"),
    ):
        if marker in text:
            return f"GCS error: {phrase}"
    return f"storage client error ({type(exc).__name__})"


def _delete_quietly(filesystem: pafs.GcsFileSystem, path: str) -> None:
    try:
        filesystem.delete_file(path)
    except OSError:
        return
