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


def parse_instant(value: str) -> datetime:
    """An ISO-8601 instant as people type it (`Z` or `z`, surrounding blanks); without an offset it is UTC.

    Raises:
        ValueError: not ISO-8601.
    """
    parsed = datetime.fromisoformat(value.strip().replace("z", "Z"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
