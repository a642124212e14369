"""What the NATS relay reports: log head, published position, lag, throughput, errors."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

_RATE_WINDOW_SECONDS = 10.0


@dataclass
class RelayMetrics:
    """Updated by the relay as it goes; read by `/metrics` (the relay's own, or the serve process's)."""

    relay: str = ""
    leader: bool = False
    nats_connected: bool = False
    head_position: int = 0
    published_position: int = 0
    oldest_unpublished_time: datetime | None = None
    published_total: int = 0
    duplicates_total: int = 0
    data_omitted_total: int = 0
    errors_total: int = 0
    _recent: deque[tuple[float, int]] = field(default_factory=deque, repr=False)

    def record_published(self, position: int, messages: int, duplicates: int) -> None:
        now = time.monotonic()
        self.published_position = max(self.published_position, position)
        self.head_position = max(self.head_position, position)
        self.published_total += messages
        self.duplicates_total += duplicates
        self._recent.append((now, messages))
        while self._recent and self._recent[0][0] < now - _RATE_WINDOW_SECONDS:
            self._recent.popleft()

    @property
    def published_per_second(self) -> float:
        """Messages acknowledged by JetStream per second, over the last ten seconds."""
        now = time.monotonic()
        return sum(count for at, count in self._recent if at >= now - _RATE_WINDOW_SECONDS) / _RATE_WINDOW_SECONDS

    @property
    def lag_positions(self) -> int:
        return max(0, self.head_position - self.published_position)

    def lag_seconds(self, now: datetime) -> float:
        """Age of the oldest event not yet on the stream (0 when caught up)."""
        if self.oldest_unpublished_time is None or self.lag_positions == 0:
            return 0.0
        return max(0.0, (now - self.oldest_unpublished_time).total_seconds())
