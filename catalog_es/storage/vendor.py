"""Vending credentials for a table, for every store: the cache (single-flight), the store's own threads, the call.

S3: STS AssumeRole with a session policy; ADLS: a directory SAS (a user delegation key first, unless a shared
key signs); GCS: a downscoped token from Google's STS. Each store's calls run on a bounded pool of its own: on the
loop's default executor a burst of them (a cold cache) would queue the name lookups of new database connections
behind them and starve the pool.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

import msgspec

from catalog_es.errors import StorageAccessError
from catalog_es.storage.adls import (
    AdlsProfile,
    AzureClientCredential,
    AzureSharedKeyCredential,
    AzureSystemIdentityCredential,
)
from catalog_es.storage.adls_sas import adls_vended_config, sas_expiry_key
from catalog_es.storage.credential_cache import CredentialCache
from catalog_es.storage.gcs import GcsProfile, GcsServiceAccountKeyCredential, GcsSystemIdentityCredential
from catalog_es.storage.gcs_tokens import TokenExchange, gcs_vended_config
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile, StorageCredential
from catalog_es.storage.session_policy import AccessLevel, session_policy
from catalog_es.storage.sts import VendedCredential, assume_role, sts_client

_MAX_CLIENTS = 256  # one per warehouse setup; dropped all at once past this (they are cheap to rebuild)
_GCS_EXPIRY = "gcs.oauth2.token-expires-at"

VendingProfile = S3Profile | AdlsProfile | GcsProfile
Store = Literal["s3", "adls", "gcs"]
Issued = TypeVar("Issued")


@dataclass(frozen=True)
class VendedConfig:
    """A table config's credential keys (a SAS or a token) and when they expire; `repr` never shows them."""

    config: dict[str, str] = field(repr=False)
    expires_at: datetime


class CredentialVendor:
    """One per process: vends through its cache, calling each store on threads of that store's own."""

    def __init__(
        self,
        endpoints: EndpointPolicy | None = None,
        cache: CredentialCache | None = None,
        threads: int = 4,
        gcs_exchange: TokenExchange | None = None,  # tests: Google's STS stand-in
    ) -> None:
        self.endpoints = endpoints or EndpointPolicy()
        self.cache = cache or CredentialCache()
        self._pools = {
            store: ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"vend-{store}")
            for store in ("s3", "adls", "gcs")
        }
        self._clients: dict[str, Any] = {}  # STS clients by warehouse setup: building one costs more than a call
        self._gcs_exchange = gcs_exchange

    async def vend_keys(
        self,
        profile: VendingProfile,
        credential: StorageCredential | None,
        location: str,
        level: AccessLevel,
        principal_id: str,
    ) -> dict[str, str]:
        """The table config's credential keys for `level` on `location`, for the principal, from any store.

        Raises:
            InvalidLocationError: not a location of the warehouse's store.
            EndpointNotAllowedError, StorageAccessError: the store refused or could not be reached.
        """
        if isinstance(profile, S3Profile):
            vended = await self.vend(profile, credential, location, level, principal_id)
            return {
                "s3.access-key-id": vended.access_key_id,
                "s3.secret-access-key": vended.secret_access_key,
                "s3.session-token": vended.session_token,
                "s3.session-token-expires-at-ms": str(vended.expires_at_ms()),
            }
        call = self._object_store_call(profile, credential, location, level)
        store: Store = "adls" if isinstance(profile, AdlsProfile) else "gcs"
        key = (store, _setup(profile, credential), location, level, principal_id)
        return (await self.cache.get(key, lambda: self._run(store, call))).config

    async def vend(
        self,
        profile: S3Profile,
        credential: StorageCredential | None,
        location: str,
        level: AccessLevel,
        principal_id: str,
    ) -> VendedCredential:
        """S3 keys for `level` on the objects under `location`, for the principal (cached until close to expiry).

        Raises:
            InvalidLocationError: not an S3 location.
            EndpointNotAllowedError, StorageAccessError: see `catalog_es.storage.sts`.
        """
        if credential is not None and not isinstance(credential, S3AccessKeyCredential):
            raise StorageAccessError("An S3 warehouse's storage credential must be an access key to call STS")
        policy = session_policy(location, level, profile.region, profile.aws_kms_key_arn)
        setup = _setup(profile, credential)
        key = ("s3", setup, location, level, principal_id)

        def call() -> VendedCredential:
            client = self._clients.get(setup)
            if client is None:
                if len(self._clients) >= _MAX_CLIENTS:
                    self._clients.clear()
                client = self._clients[setup] = sts_client(profile, credential, self.endpoints)
            return assume_role(client, profile, credential, policy, principal_id)

        return await self.cache.get(key, lambda: self._run("s3", call))

    def _object_store_call(
        self, profile: AdlsProfile | GcsProfile, credential: StorageCredential | None, location: str, level: AccessLevel
    ) -> Callable[[], VendedConfig]:
        """The blocking call that vends an ADLS SAS or a GCS token. Raises: StorageAccessError (a misfit credential)."""
        permissions: Literal["read", "read-write-delete"] = "read" if level == "read" else "read-write-delete"
        if isinstance(profile, AdlsProfile) and isinstance(
            credential, AzureSharedKeyCredential | AzureClientCredential | AzureSystemIdentityCredential
        ):
            azure = credential

            def sas() -> VendedConfig:
                config = adls_vended_config(profile, azure, location, permissions, datetime.now(UTC))
                return VendedConfig(config, _expiry(config, sas_expiry_key(profile)))

            return sas
        if isinstance(profile, GcsProfile) and isinstance(
            credential, GcsServiceAccountKeyCredential | GcsSystemIdentityCredential
        ):
            google = credential

            def token() -> VendedConfig:
                config = gcs_vended_config(profile, google, location, permissions, self._gcs_exchange)
                return VendedConfig(config, _expiry(config, _GCS_EXPIRY))

            return token
        raise StorageAccessError("The warehouse's storage credential cannot issue credentials for its profile")

    async def _run(self, store: Store, call: Callable[[], Issued]) -> Issued:
        return await asyncio.get_running_loop().run_in_executor(self._pools[store], call)


def _setup(profile: VendingProfile, credential: StorageCredential | None) -> str:
    """The profile and the credential by digest (never the secret): a changed warehouse never gets keys issued for
    its old settings."""
    return hashlib.sha256(msgspec.json.encode((profile, credential))).hexdigest()


def _expiry(config: dict[str, str], key: str) -> datetime:
    """When the vended keys expire (now, so nothing is kept, when the store vended none)."""
    milliseconds = config.get(key)
    if milliseconds is None:
        return datetime.now(UTC)
    return datetime.fromtimestamp(int(milliseconds) / 1000, UTC)
