"""Vending credentials for a table, whatever the store: through the cache (single-flight), on the store's threads.

The backend knows how its store vends (S3: STS AssumeRole with a session policy; ADLS: a directory SAS; GCS: a
downscoped token); this module makes every store's vending cached and bounded alike. Each store's calls run on a
bounded pool of its own: on the loop's default executor a burst of them (a cold cache) would queue the name
lookups of new database connections behind them and starve the pool.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import get_args

from catalog_es.storage.backends import StorageBackend, VendedConfig
from catalog_es.storage.backends.base import Store
from catalog_es.storage.credential_cache import CredentialCache
from catalog_es.storage.session_policy import AccessLevel


class CredentialVendor:
    """One per process: one cache for every store, one thread pool per store."""

    def __init__(self, cache: CredentialCache | None = None, threads: int = 4) -> None:
        self.cache = cache or CredentialCache()
        self._pools = {
            store: ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"vend-{store}")
            for store in get_args(Store)
        }

    async def vend(
        self, backend: StorageBackend, location: str, level: AccessLevel, principal_id: str
    ) -> dict[str, str]:
        """The table config's credential keys for `level` on `location`, for the principal (cached until close to
        expiry; concurrent requests for one key share one call to the store).

        Raises:
            InvalidLocationError: not a location of the warehouse's store.
            EndpointNotAllowedError, StorageAccessError: the store refused or could not be reached.
        """
        call = backend.vending(location, level, principal_id)
        key = (backend.store, backend.setup, location, level, principal_id)

        async def issue() -> VendedConfig:
            return await asyncio.get_running_loop().run_in_executor(self._pools[backend.store], call)

        return (await self.cache.get(key, issue)).config
