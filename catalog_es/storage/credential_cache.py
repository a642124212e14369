"""Vended credentials kept until close to expiry, bounded, with one issue per key at a time (single-flight).

Every store's vending goes through it: S3 STS keys, ADLS directory SAS tokens, GCS downscoped tokens.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar, cast

from cachetools import LRUCache


class Expiring(Protocol):
    """A vended credential: all the cache reads of it is when it expires."""

    @property
    def expires_at(self) -> datetime: ...


Vended = TypeVar("Vended", bound=Expiring)


@dataclass(frozen=True)
class _Entry:
    credential: Expiring
    refresh_at: float  # epoch seconds after which a request issues a new one


class CredentialCache:
    """Per key (warehouse, table location, access level, principal): the last credential until `refresh_fraction`
    of its validity is left, so a client always gets keys that stay valid for a while.

    Concurrent requests for a key that is missing or due share one issue (one STS call); a failed issue is not
    kept, each waiter gets its error. At most `max_entries` keys are kept, least recently used first out.
    """

    def __init__(
        self,
        max_entries: int = 10_000,
        refresh_fraction: float = 0.25,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._entries: LRUCache[Hashable, _Entry] = LRUCache(max_entries)
        self._pending: dict[Hashable, asyncio.Future[Any]] = {}
        self._fraction, self._clock = refresh_fraction, clock
        self.issued = 0  # how many times a credential was issued (STS calls), for metrics and the benchmark

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: Hashable, issue: Callable[[], Awaitable[Vended]]) -> Vended:
        """The cached credential for `key`, or the one `issue()` returns (awaited once for all concurrent callers).

        Raises:
            Exception: whatever `issue()` raised.
        """
        now = self._clock()
        entry = self._entries.get(key)
        if entry is not None and now < entry.refresh_at:
            return cast("Vended", entry.credential)  # a key is always issued by callers of one store's type
        pending = self._pending.get(key)
        if pending is not None:
            return cast("Vended", await asyncio.shield(pending))
        future: asyncio.Future[Vended] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            self.issued += 1
            credential = await issue()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            del self._pending[key]
        future.set_result(credential)
        self._store(key, credential, now)
        return credential

    def _store(self, key: Hashable, credential: Expiring, issued_at: float) -> None:
        expires = credential.expires_at.timestamp()
        refresh_at = expires - (expires - issued_at) * self._fraction
        self._entries[key] = _Entry(credential, refresh_at)
