"""The GCS backend: pyarrow IO with the catalog's own token, downscoped tokens for clients."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from catalog_es.storage.access_delegation import DelegationMode
from catalog_es.storage.backends.base import ForeignLocationError, Store, VendedConfig, setup_digest
from catalog_es.storage.backends.object_store import ObjectStoreBackend, Permissions, vending_call
from catalog_es.storage.gcs import GcsCredential, GcsProfile, gcs_client_config
from catalog_es.storage.gcs_io import GcsIO, reason
from catalog_es.storage.gcs_tokens import TokenExchange, gcs_vended_config
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import location_schemes
from catalog_es.storage.session_policy import AccessLevel


class GcsBackend(ObjectStoreBackend):
    """A GCS bucket under an optional key prefix; clients get a token downscoped to the table's prefix."""

    store: Store = "gcs"

    def __init__(
        self,
        profile: GcsProfile,
        credential: GcsCredential | None,
        endpoints: EndpointPolicy,
        exchange: TokenExchange | None = None,  # tests: Google's STS stand-in
    ) -> None:
        super().__init__(GcsIO(profile, credential, endpoints), reason)
        self._profile, self._credential, self._exchange = profile, credential, exchange
        self.setup = setup_digest(profile, credential)

    def check_own(self, location: str, canonical: str) -> None:
        parts, own = urlsplit(canonical), self._profile.bucket
        if parts.scheme not in location_schemes(self._profile) or parts.netloc != own:
            raise ForeignLocationError(f"Location {location} is not in this warehouse's storage ({own})")

    def client_config(self) -> dict[str, str]:
        return gcs_client_config(self._profile)

    def vends(self, modes: frozenset[DelegationMode]) -> bool:
        return self._profile.sts_enabled

    def vending(self, location: str, level: AccessLevel, principal_id: str) -> Callable[[], VendedConfig]:
        """A token from Google's STS, downscoped by a Credential Access Boundary to the table's prefix."""
        credential = self._credential

        def token(permissions: Permissions) -> dict[str, str]:
            assert credential is not None  # vending_call checks
            return gcs_vended_config(self._profile, credential, location, permissions, self._exchange)

        return vending_call(None if credential is None else token, level, "gcs.oauth2.token-expires-at")
