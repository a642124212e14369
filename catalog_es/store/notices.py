"""What an append's notification on the log's channel says: the new log head and the kinds of stream it changed.

The payload is the head, then one word per kind of stream the commit appended to (`1234 table task`), so a follower
that only cares about some kinds (the warehouse cache, the revocation list) ignores the others' commits without a
query. A payload of the head alone (what servers wrote before the kinds) may have changed anything.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec


class Notice(msgspec.Struct, frozen=True):
    head: int | None  # None: not a payload of this format
    kinds: frozenset[str] | None  # None: unknown, so possibly every kind

    def may_change(self, kind: str) -> bool:
        """Whether the notified commit may have appended to a stream of `kind` (`warehouse`, `service-principal`)."""
        return self.kinds is None or kind in self.kinds


def kinds_suffix(kinds: Iterable[str]) -> str:
    """What follows the head in the payload (the append statement adds it to the head it hands out)."""
    return "".join(f" {kind}" for kind in sorted(set(kinds)))


def parse_notice(payload: str) -> Notice:
    head, *kinds = payload.split(" ")
    return Notice(int(head) if head.isdigit() else None, frozenset(kinds) if kinds else None)
