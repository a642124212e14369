"""Vending S3 credentials for a table: the session policy, the cache and the STS call put together."""

from __future__ import annotations

import asyncio
import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec

from catalog_es.errors import StorageAccessError
from catalog_es.storage.credential_cache import CredentialCache
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile, StorageCredential
from catalog_es.storage.session_policy import AccessLevel, session_policy
from catalog_es.storage.sts import VendedCredential, assume_role, sts_client

_MAX_CLIENTS = 256  # one per warehouse setup; dropped all at once past this (they are cheap to rebuild)


class CredentialVendor:
    """One per process: vends through its cache, calling STS on its own threads (never on the event loop)."""

    def __init__(
        self, endpoints: EndpointPolicy | None = None, cache: CredentialCache | None = None, threads: int = 4
    ) -> None:
        self.endpoints = endpoints or EndpointPolicy()
        self.cache = cache or CredentialCache()
        # STS calls get threads of their own: on the loop's default executor a burst of them (a cold cache) would
        # queue the name lookups of new database connections behind them and starve the pool.
        self._threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sts")
        self._clients: dict[str, Any] = {}  # STS clients by warehouse setup: building one costs more than a call

    async def vend(
        self,
        profile: S3Profile,
        credential: StorageCredential | None,
        location: str,
        level: AccessLevel,
        principal_id: str,
    ) -> VendedCredential:
        """Credentials for `level` on the objects under `location`, for the principal (cached until close to expiry).

        Raises:
            InvalidLocationError: not an S3 location.
            EndpointNotAllowedError, StorageAccessError: see `catalog_es.storage.sts`.
        """
        if credential is not None and not isinstance(credential, S3AccessKeyCredential):
            raise StorageAccessError("An S3 warehouse's storage credential must be an access key to call STS")
        policy = session_policy(location, level, profile.region, profile.aws_kms_key_arn)
        # The key names the profile and the credential (by digest, never the secret) so that a changed
        # warehouse never gets keys issued for its old settings.
        setup = hashlib.sha256(msgspec.json.encode((profile, credential))).hexdigest()
        key = (setup, location, level, principal_id)

        def call() -> VendedCredential:
            client = self._clients.get(setup)
            if client is None:
                if len(self._clients) >= _MAX_CLIENTS:
                    self._clients.clear()
                client = self._clients[setup] = sts_client(profile, credential, self.endpoints)
            return assume_role(client, profile, credential, policy, principal_id)

        async def issue() -> VendedCredential:
            return await asyncio.get_running_loop().run_in_executor(self._threads, call)

        return await self.cache.get(key, issue)
