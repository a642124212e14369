"""Time and id sources, injected so decisions and tests are deterministic."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class IdSource(Protocol):
    def new_id(self) -> uuid.UUID: ...


class SystemClock:
    """Wall-clock time in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class RandomIds:
    """Random version-4 UUIDs."""

    def new_id(self) -> uuid.UUID:
        return uuid.uuid4()


def millis(moment: datetime) -> int:
    """Milliseconds since the epoch, as Iceberg metadata counts time."""
    return int(moment.timestamp() * 1000)
