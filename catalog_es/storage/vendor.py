"""Vending S3 credentials for a table: the session policy, the cache and the STS call put together."""

from __future__ import annotations

import asyncio
import hashlib

import msgspec

from catalog_es.storage.credential_cache import CredentialCache
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import S3Profile, StorageCredential
from catalog_es.storage.session_policy import AccessLevel, session_policy
from catalog_es.storage.sts import VendedCredential, assume_role


class CredentialVendor:
    """One per process: vends through its cache, calling STS off the event loop."""

    def __init__(self, endpoints: EndpointPolicy | None = None, cache: CredentialCache | None = None) -> None:
        self.endpoints = endpoints or EndpointPolicy()
        self.cache = cache or CredentialCache()

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
            EndpointNotAllowedError, StorageAccessError: see `catalog_es.storage.sts.assume_role`.
        """
        policy = session_policy(location, level, profile.region, profile.aws_kms_key_arn)
        # The key names the profile and the credential (by digest, never the secret) so that a changed
        # warehouse never gets keys issued for its old settings.
        setup = hashlib.sha256(msgspec.json.encode((profile, credential))).hexdigest()
        key = (setup, location, level, principal_id)

        async def issue() -> VendedCredential:
            return await asyncio.to_thread(assume_role, profile, credential, self.endpoints, policy, principal_id)

        return await self.cache.get(key, issue)
