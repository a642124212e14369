"""How often the token endpoint checks a secret: token buckets per client id and per peer address.

Each client-credentials request costs one scrypt verification (tens of milliseconds of CPU, on purpose), so an
unbounded stream of guesses is both a brute-force attack on a secret and a denial of service. A request takes
one token from its client id's bucket and one from its peer's; an empty bucket answers 429 with `Retry-After`
before any secret is checked. Buckets refill continuously (`per_minute` a minute, holding at most that many) and
live in this process only (with `serve --workers N` each worker counts on its own); at most `max_keys` buckets
are kept, the least recently used dropped first, so rotating ids or addresses costs memory no more than that.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from cachetools import LRUCache

_MAX_KEYS = 10_000


@dataclass
class _Bucket:
    tokens: float
    at: float


class TokenBuckets:
    """`per_minute` requests a minute for each key, a burst of as many."""

    def __init__(
        self, per_minute: int, *, max_keys: int = _MAX_KEYS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.capacity, self.max_keys, self._clock = per_minute / 60.0, float(per_minute), max_keys, clock
        self._buckets: LRUCache[str, _Bucket] = LRUCache(max_keys)

    def _refilled(self, key: str) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(key) or _Bucket(self.capacity, now)
        bucket.tokens, bucket.at = min(self.capacity, bucket.tokens + (now - bucket.at) * self.rate), now
        self._buckets[key] = bucket  # the most recently used; the least recently used goes past `max_keys`
        return bucket

    def wait_seconds(self, key: str) -> int:
        """0 when `key` may go now; else the whole seconds until it may (nothing is taken)."""
        bucket = self._refilled(key)
        return 0 if bucket.tokens >= 1 else max(1, math.ceil((1 - bucket.tokens) / self.rate))

    def take(self, key: str) -> None:
        self._refilled(key).tokens -= 1


class TokenRequestLimiter:
    """The token endpoint's two limits: per client id and per peer address."""

    def __init__(
        self,
        per_client_per_minute: int = 60,  # the settings' defaults (CATALOG_ES__SERVICE_PRINCIPALS__TOKEN_REQUESTS_*)
        per_peer_per_minute: int = 120,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clients = TokenBuckets(per_client_per_minute, clock=clock)
        self.peers = TokenBuckets(per_peer_per_minute, clock=clock)

    def admit(self, client_id: str, peer: str) -> int:
        """0 and one request counted against both when both allow it; else the seconds to wait (none counted)."""
        wait = max(self.clients.wait_seconds(client_id), self.peers.wait_seconds(peer))
        if wait == 0:
            self.clients.take(client_id)
            self.peers.take(peer)
        return wait
