"""The catalog's IO on the object stores other than S3 (ADLS, GCS) behind one small interface."""

from __future__ import annotations

from typing import Protocol

from pyiceberg.io import FileIO

from catalog_es.errors import BadRequestError
from catalog_es.storage.adls import AdlsProfile, AzureCredential
from catalog_es.storage.adls_io import AdlsIO
from catalog_es.storage.gcs import GcsCredential, GcsProfile
from catalog_es.storage.gcs_io import GcsIO
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import StorageCredential, StorageProfile, check_credential_fits


class ObjectStoreIO(Protocol):
    """What `WarehouseStorage` needs of a store beyond pyiceberg's FileIO (blocking calls)."""

    def describe(self) -> str: ...

    def file_io(self) -> FileIO: ...

    def is_empty(self, location: str) -> bool: ...

    def files_below(self, location: str) -> list[str]: ...

    def purge(self, location: str) -> None: ...

    def probe(self) -> None: ...


def object_store_io(
    profile: StorageProfile, credential: StorageCredential | None, endpoints: EndpointPolicy
) -> ObjectStoreIO | None:
    """The IO for an ADLS or GCS profile; None for the others (files, S3).

    Raises:
        BadRequestError: a credential of another store than the profile's.
    """
    check_credential_fits(profile, credential)
    if isinstance(profile, AdlsProfile):
        return AdlsIO(profile, _azure(credential), endpoints)
    if isinstance(profile, GcsProfile):
        return GcsIO(profile, _gcs(credential), endpoints)
    return None


def _azure(credential: StorageCredential | None) -> AzureCredential | None:
    if credential is None or isinstance(credential, AzureCredential):
        return credential
    raise BadRequestError("An ADLS profile needs an 'az' credential")


def _gcs(credential: StorageCredential | None) -> GcsCredential | None:
    if credential is None or isinstance(credential, GcsCredential):
        return credential
    raise BadRequestError("A GCS profile needs a 'gcs' credential")
