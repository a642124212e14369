"""One backend per store (file, S3, ADLS, GCS), each owning its IO, client config, vending and signing.

A fifth store is one module here plus its entry in `backend_for`.
"""

from __future__ import annotations

from catalog_es.errors import BadRequestError
from catalog_es.storage.adls import AdlsProfile, AzureCredential
from catalog_es.storage.backends.adls import AdlsBackend
from catalog_es.storage.backends.base import ForeignLocationError, StorageBackend, VendedConfig
from catalog_es.storage.backends.file import FileBackend
from catalog_es.storage.backends.gcs import GcsBackend
from catalog_es.storage.backends.s3 import S3Backend
from catalog_es.storage.gcs import GcsCredential, GcsProfile
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import (
    FileProfile,
    S3AccessKeyCredential,
    StorageCredential,
    StorageProfile,
    check_credential_fits,
)

__all__ = ["ForeignLocationError", "StorageBackend", "VendedConfig", "backend_for", "validate_access"]


def backend_for(
    profile: StorageProfile, credential: StorageCredential | None, endpoints: EndpointPolicy | None = None
) -> StorageBackend:
    """The backend for a warehouse's profile and credential (no IO until one of its calls).

    Raises:
        BadRequestError: a credential of another store than the profile's.
    """
    check_credential_fits(profile, credential)
    policy = endpoints or EndpointPolicy()
    if isinstance(profile, FileProfile):
        return FileBackend(profile)
    if isinstance(profile, AdlsProfile) and isinstance(credential, AzureCredential | None):
        return AdlsBackend(profile, credential, policy)
    if isinstance(profile, GcsProfile) and isinstance(credential, GcsCredential | None):
        return GcsBackend(profile, credential, policy)
    if isinstance(credential, S3AccessKeyCredential | None) and not isinstance(profile, AdlsProfile | GcsProfile):
        return S3Backend(profile, credential, policy)
    raise BadRequestError("The storage credential does not fit the storage profile")  # check_credential_fits


def validate_access(
    profile: StorageProfile, credential: StorageCredential | None, endpoints: EndpointPolicy | None = None
) -> None:
    """Write, read back and delete a probe under the base location (blocking: run off the loop).

    Raises:
        StorageAccessError: any step fails; the message names the location, endpoint and a safe reason.
        EndpointNotAllowedError: an endpoint is refused (before any connection).
        BadRequestError: a credential of another store than the profile's.
    """
    backend_for(profile, credential, endpoints).probe()
