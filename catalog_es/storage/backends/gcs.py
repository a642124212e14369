"""The GCS backend: pyarrow IO with the catalog's own token, downscoped tokens for clients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal
from urllib.parse import urlsplit

from pyiceberg.io import FileIO

from catalog_es.errors import StorageAccessError
from catalog_es.storage.access_delegation import DelegationMode
from catalog_es.storage.backends.base import ForeignLocationError, Store, VendedConfig, setup_digest
from catalog_es.storage.gcs import GcsCredential, GcsProfile, gcs_client_config
from catalog_es.storage.gcs_io import GcsIO, reason
from catalog_es.storage.gcs_tokens import TokenExchange, gcs_vended_config
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import location_schemes
from catalog_es.storage.session_policy import AccessLevel
from catalog_es.storage.vended_expiry import expiry_of

_EXPIRY = "gcs.oauth2.token-expires-at"


class GcsBackend:
    """A GCS bucket under an optional key prefix; clients get a token downscoped to the table's prefix."""

    store: Store = "gcs"
    signer = None

    def __init__(
        self,
        profile: GcsProfile,
        credential: GcsCredential | None,
        endpoints: EndpointPolicy,
        exchange: TokenExchange | None = None,  # tests: Google's STS stand-in
    ) -> None:
        self._profile, self._credential, self._exchange = profile, credential, exchange
        self.setup = setup_digest(profile, credential)
        self._io = GcsIO(profile, credential, endpoints)

    def describe(self) -> str:
        return self._io.describe()

    def check_own(self, location: str, canonical: str) -> None:
        parts = urlsplit(canonical)
        if parts.scheme not in location_schemes(self._profile) or parts.netloc != self._profile.bucket:
            own = self._profile.bucket
            raise ForeignLocationError(f"Location {location} is not in this warehouse's storage ({own})")

    def file_io(self, location: str) -> FileIO:
        return self._io.file_io()

    def delete_file(self, location: str) -> None:
        self._io.file_io().delete(location)

    def is_empty(self, location: str) -> bool:
        return self._io.is_empty(location)

    def purge(self, location: str) -> None:
        self._io.purge(location)

    def probe(self) -> None:
        self._io.probe()

    def failure_reason(self, location: str, exc: OSError) -> str:
        reason(exc, location)  # logs the details
        return f"storage error in {self.describe()}"

    def client_config(self) -> dict[str, str]:
        return gcs_client_config(self._profile)

    def vends(self, modes: frozenset[DelegationMode]) -> bool:
        return self._profile.sts_enabled

    def vending(self, location: str, level: AccessLevel, principal_id: str) -> Callable[[], VendedConfig]:
        """A token from Google's STS, downscoped by a Credential Access Boundary to the table's prefix."""
        credential = self._credential
        if credential is None:
            raise StorageAccessError("The warehouse's storage credential cannot issue credentials for its profile")
        permissions: Literal["read", "read-write-delete"] = "read" if level == "read" else "read-write-delete"

        def call() -> VendedConfig:
            config = gcs_vended_config(self._profile, credential, location, permissions, self._exchange)
            return VendedConfig(config, expiry_of(config, _EXPIRY))

        return call
