"""When vended keys expire, read off the table config keys a store's vending returned."""

from __future__ import annotations

from datetime import UTC, datetime


def expiry_of(config: dict[str, str], key: str) -> datetime:
    """The expiry under `key` (epoch milliseconds); now when the store vended nothing (so nothing is kept)."""
    milliseconds = config.get(key)
    if milliseconds is None:
        return datetime.now(UTC)
    return datetime.fromtimestamp(int(milliseconds) / 1000, UTC)
