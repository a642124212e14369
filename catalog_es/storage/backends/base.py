"""What every storage backend does for a warehouse: the protocol, and the error for a location on another store."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

import msgspec
from pyiceberg.io import FileIO

from catalog_es.errors import InvalidLocationError, StorageAccessError
from catalog_es.storage.access_delegation import DelegationMode
from catalog_es.storage.profiles import StorageCredential, StorageProfile
from catalog_es.storage.session_policy import AccessLevel
from catalog_es.storage.signing import RequestSigner

Store = Literal["file", "s3", "adls", "gcs"]


class ForeignLocationError(InvalidLocationError, StorageAccessError):
    """A location on another storage than the warehouse's (scheme or bucket): refused before any IO."""


@dataclass(frozen=True)
class VendedConfig:
    """A table config's credential keys (STS keys, a SAS, a token) and when they expire; `repr` shows neither."""

    config: dict[str, str] = field(repr=False)
    expires_at: datetime


class StorageBackend(Protocol):
    """One warehouse's store: blocking calls (run them off the event loop), each on a location `check_own` passed.

    `setup` names the profile and credential by digest (never the secret), so a changed warehouse never gets
    credentials cached for its old settings; `signer` is None where clients do not sign through the catalog.
    """

    @property
    def store(self) -> Store: ...

    @property
    def setup(self) -> str: ...

    @property
    def signer(self) -> RequestSigner | None: ...

    def describe(self) -> str:
        """The store for error messages (bucket, filesystem or directory and endpoint), no secret."""
        ...

    def check_own(self, location: str, canonical: str) -> None:
        """Raises: ForeignLocationError when the canonical location is on another store, scheme or bucket."""
        ...

    def file_io(self, location: str) -> FileIO:
        """pyiceberg's FileIO for this store. Raises: EndpointNotAllowedError for a refused endpoint."""
        ...

    def delete_file(self, location: str) -> None:
        """Delete one file (an object store leaves no directory marker). Raises: StorageAccessError, OSError."""
        ...

    def is_empty(self, location: str) -> bool:
        """Whether no file lies at or below the location (empty directories do not count)."""
        ...

    def files_below(self, location: str) -> list[str]:
        """The files at or below the location, as paths relative to it (directories do not count)."""
        ...

    def purge(self, location: str) -> None:
        """Delete everything at and below the location."""
        ...

    def probe(self) -> None:
        """Write, read back and delete a probe under the base location. Raises: StorageAccessError."""
        ...

    def failure_reason(self, location: str, exc: OSError) -> str:
        """What a caller may read of a failed read or write: a local error as is, a store's by its kind only."""
        ...

    def client_config(self) -> dict[str, str]:
        """The `config` table responses give clients for this store (keys only when the profile shares them)."""
        ...

    def vends(self, modes: frozenset[DelegationMode]) -> bool:
        """Whether table responses carry vended credentials for a client asking for `modes`."""
        ...

    def vending(self, location: str, level: AccessLevel, principal_id: str) -> Callable[[], VendedConfig]:
        """The blocking call that vends credentials for `level` on `location` (run through the credential cache).

        Raises: StorageAccessError when this store's credential cannot vend.
        """
        ...


def setup_digest(profile: StorageProfile, credential: StorageCredential | None) -> str:
    return hashlib.sha256(msgspec.json.encode((profile, credential))).hexdigest()


def flag(value: bool) -> str:
    return "true" if value else "false"
