"""The catalog's own IO on an ADLS Gen2 warehouse (adlfs over the Blob API): metadata, listings, purges, probe."""

from __future__ import annotations

import re
import uuid
from typing import Any, Final
from urllib.parse import urlsplit

import structlog
from adlfs import AzureBlobFileSystem
from azure.core.exceptions import AzureError, HttpResponseError, ServiceRequestError, ServiceResponseError
from pyiceberg.io import FileIO, load_file_io

from catalog_es.errors import StorageAccessError
from catalog_es.storage.adls import (
    AdlsProfile,
    AzureClientCredential,
    AzureCredential,
    AzureSharedKeyCredential,
    adls_blob_endpoint,
    adls_blob_path,
)
from catalog_es.storage.outbound import EndpointPolicy

_PROBE_BODY: Final = b"catalog-es storage access probe\n"
_ERROR_CODE: Final = re.compile(r"[A-Za-z]{2,64}")  # Azure's error codes are identifiers; anything else is hidden
_log = structlog.get_logger(__name__)


class AdlsIO:
    """One ADLS warehouse's files through adlfs, which speaks the Blob API (so Azurite, which has no DFS API,
    serves it too). Never Azure's default credential chain unless the credential asks for the system identity."""

    def __init__(self, profile: AdlsProfile, credential: AzureCredential | None, endpoints: EndpointPolicy) -> None:
        self._profile = profile
        self._credential = credential
        self._endpoints = endpoints
        self._filesystem: AzureBlobFileSystem | None = None
        self._io: FileIO | None = None

    def describe(self) -> str:
        """Filesystem, account and endpoint, for error messages."""
        return f"filesystem {self._profile.filesystem!r} at {adls_blob_endpoint(self._profile)}"

    def file_io(self) -> FileIO:
        """pyiceberg's fsspec FileIO (adlfs) with the warehouse credential.

        Raises:
            EndpointNotAllowedError: the blob endpoint or authority host is refused.
        """
        if self._io is None:
            self._check_endpoints()
            self._io = load_file_io({"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO", **self._properties()})
        return self._io

    def is_empty(self, location: str) -> bool:
        """Whether no blob lies at or below the location (directories of a hierarchical account do not count)."""
        filesystem, path = self._open(), self._path(location)
        try:
            filesystem.invalidate_cache()
            return not filesystem.find(path, maxdepth=None, withdirs=False)
        except (AzureError, OSError) as exc:
            raise self._failure("list", location, exc) from exc

    def files_below(self, location: str) -> list[str]:
        """The blobs at or below the location, as paths relative to it."""
        filesystem, path = self._open(), self._path(location)
        try:
            filesystem.invalidate_cache()
            files = filesystem.find(path, maxdepth=None, withdirs=False)
        except (AzureError, OSError) as exc:
            raise self._failure("list", location, exc) from exc
        return [str(name).removeprefix(f"{path}/") for name in files]

    def purge(self, location: str) -> None:
        """Delete every blob at and below the location."""
        filesystem, path = self._open(), self._path(location)
        try:
            filesystem.invalidate_cache()
            files = filesystem.find(path, maxdepth=None, withdirs=False)
            if files:
                filesystem.rm(files)
        except (AzureError, OSError) as exc:
            raise self._failure("purge", location, exc) from exc

    def probe(self) -> None:
        """Write, read back and delete a blob under the key prefix.

        Raises:
            StorageAccessError: a step failed or read back other bytes.
            EndpointNotAllowedError: an endpoint is refused (before any connection).
        """
        filesystem = self._open()
        name = "/".join(part for part in (self._profile.key_prefix, f".catalog-es-probe-{uuid.uuid4().hex}") if part)
        path, step, written = f"{self._profile.filesystem}/{name}", "write", False
        try:
            filesystem.pipe_file(path, _PROBE_BODY)
            written, step = True, "read"
            if filesystem.cat_file(path) != _PROBE_BODY:
                raise StorageAccessError(f"Storage access check failed for {self.describe()}: read back other bytes")
            step = "delete"
            filesystem.rm_file(path)
            written = False
        except (AzureError, OSError) as exc:
            raise StorageAccessError(
                f"Storage access check failed for {self.describe()}: cannot {step} {name}: {reason(exc, name)}"
            ) from exc
        finally:
            if written:
                _remove_quietly(filesystem, path)

    def _open(self) -> AzureBlobFileSystem:
        if self._filesystem is None:
            self._check_endpoints()
            self._filesystem = AzureBlobFileSystem(skip_instance_cache=True, **self._filesystem_arguments())
        return self._filesystem

    def _check_endpoints(self) -> None:
        if self._profile.endpoint or self._profile.host:  # Azure's own public endpoints need no entry
            self._endpoints.check(adls_blob_endpoint(self._profile))
        self._endpoints.check(self._profile.authority_host)

    def _path(self, location: str) -> str:
        return f"{self._profile.filesystem}/{adls_blob_path(location)}".rstrip("/")

    def _filesystem_arguments(self) -> dict[str, Any]:
        properties = self._properties()
        return {
            "connection_string": properties.get("adls.connection-string"),
            "account_name": properties.get("adls.account-name"),
            "account_host": properties.get("adls.account-host"),
            "tenant_id": properties.get("adls.tenant-id"),
            "client_id": properties.get("adls.client-id"),
            "client_secret": properties.get("adls.client-secret"),
        }

    def _properties(self) -> dict[str, str]:
        """pyiceberg's adlfs keys: a connection string for a shared key, else account, host and client."""
        profile, credential, endpoint = self._profile, self._credential, adls_blob_endpoint(self._profile)
        if credential is None:
            raise StorageAccessError(f"ADLS storage needs a credential ({self.describe()})")
        if isinstance(credential, AzureSharedKeyCredential):
            connection = (
                f"DefaultEndpointsProtocol={urlsplit(endpoint).scheme};AccountName={profile.account_name};"
                f"AccountKey={credential.key};BlobEndpoint={endpoint};"
            )
            return {"adls.connection-string": connection, "adls.account-name": profile.account_name}
        properties = {"adls.account-name": profile.account_name, "adls.account-host": urlsplit(endpoint).netloc}
        if isinstance(credential, AzureClientCredential):
            properties |= {
                "adls.tenant-id": credential.tenant_id,
                "adls.client-id": credential.client_id,
                "adls.client-secret": credential.client_secret,
            }
        return properties  # azure-system-identity: adlfs's default chain, the one case it is wanted

    def _failure(self, action: str, location: str, exc: Exception) -> StorageAccessError:
        return StorageAccessError(f"Cannot {action} {location} in {self.describe()}: {reason(exc, location)}")


def reason(exc: Exception, location: str = "") -> str:
    """A fixed phrase for the failure: Azure's error code and HTTP status at most, never the service's text."""
    _log.warning("storage request failed", location=location, error=repr(exc))
    if isinstance(exc, HttpResponseError):
        found = getattr(exc, "error_code", None)
        code = found if isinstance(found, str) and _ERROR_CODE.fullmatch(found) else None
        status = f"HTTP {exc.status_code}" if isinstance(exc.status_code, int) else "no status"
        return f"Azure error {code} ({status})" if code else f"Azure request failed ({status})"
    if isinstance(exc, ServiceRequestError):
        return "Could not connect to the endpoint"
    if isinstance(exc, ServiceResponseError):
        return "The endpoint did not answer properly"
    if isinstance(exc, FileNotFoundError):
        return "not found"
    return f"storage client error ({type(exc).__name__})"


def _remove_quietly(filesystem: AzureBlobFileSystem, path: str) -> None:
    try:
        filesystem.rm_file(path)
    except (AzureError, OSError):
        return
