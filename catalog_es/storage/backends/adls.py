"""The ADLS Gen2 backend: adlfs IO over the Blob API, directory SAS tokens for clients."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit

from catalog_es.locations import location_key
from catalog_es.storage.access_delegation import DelegationMode
from catalog_es.storage.adls import AdlsProfile, AzureCredential, adls_account_host, adls_client_config
from catalog_es.storage.adls_io import AdlsIO, reason
from catalog_es.storage.adls_sas import adls_vended_config, sas_expiry_key
from catalog_es.storage.backends.base import ForeignLocationError, Store, VendedConfig, setup_digest
from catalog_es.storage.backends.object_store import ObjectStoreBackend, Permissions, vending_call
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import location_schemes
from catalog_es.storage.session_policy import AccessLevel


class AdlsBackend(ObjectStoreBackend):
    """An ADLS filesystem under an optional key prefix; clients get a SAS for the table's directory."""

    store: Store = "adls"

    def __init__(self, profile: AdlsProfile, credential: AzureCredential | None, endpoints: EndpointPolicy) -> None:
        super().__init__(AdlsIO(profile, credential, endpoints), reason)
        self._profile, self._credential = profile, credential
        self.setup = setup_digest(profile, credential)

    def check_own(self, location: str, canonical: str) -> None:
        own = f"{self._profile.filesystem}@{adls_account_host(self._profile)}"
        scheme_ok = urlsplit(canonical).scheme in location_schemes(self._profile)
        if not scheme_ok or urlsplit(location_key(canonical)).netloc != own:
            raise ForeignLocationError(f"Location {location} is not in this warehouse's storage ({own})")

    def client_config(self) -> dict[str, str]:
        return adls_client_config(self._profile)

    def vends(self, modes: frozenset[DelegationMode]) -> bool:
        return self._profile.sas_enabled

    def vending(self, location: str, level: AccessLevel, principal_id: str) -> Callable[[], VendedConfig]:
        """A directory SAS (after a user delegation key, unless a shared key signs it here)."""
        credential = self._credential

        def sas(permissions: Permissions) -> dict[str, str]:
            assert credential is not None  # vending_call checks
            return adls_vended_config(self._profile, credential, location, permissions, datetime.now(UTC))

        return vending_call(None if credential is None else sas, level, sas_expiry_key(self._profile))
