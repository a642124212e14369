"""Tamper evidence: SHA-256 chains over the event log and the access audit log, and their verification.

Each link is `sha256(previous link || canonical row)`, the canonical row being the stored values as PostgreSQL
gives them back (jsonb as its normalised text, times in UTC with microseconds), encoded with msgspec. A row
changed, removed or inserted after it was chained breaks every later link; an operator who records the head
(`catalog-es audit verify` prints it) can also tell that the whole chain was not recomputed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from catalog_es.store.database import Connection

GENESIS = bytes(32)  # the link before the first row

# The event columns a link covers: everything a CloudEvent and its place in the log are made of.
EVENT_ROWS = """
SELECT global_position, id::text, source, type, subject,
       to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), datacontenttype, data::text,
       extensions::text, stream_id, stream_version, commit_id::text
FROM catalog_events WHERE global_position > %s AND global_position <= %s ORDER BY global_position
"""
ACCESS_ROWS = """
SELECT id, to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), actor, request_id, decision, status,
       method, path, operation, reason, digest
FROM access_audit_log WHERE id > %s ORDER BY id LIMIT %s
"""
_LINKS = "SELECT global_position, digest FROM catalog_event_chain WHERE global_position > %s AND global_position <= %s"


def link(previous: bytes, row: Sequence[Any]) -> bytes:
    """The link after `previous` for one row (its values in column order)."""
    return hashlib.sha256(previous + msgspec.json.encode(list(row))).digest()


@dataclass
class ChainReport:
    """What a verification found: `problems` empty means the chain holds through `checked` rows."""

    chain: str
    checked: int = 0
    head_position: int = 0
    head: bytes = GENESIS
    # Events newer than the chain (linked shortly), or access records older than it: not a problem, reported.
    unchained: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problems


async def _rows(conn: Connection, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    cursor = await conn.execute(query.encode(), params)
    return list(await cursor.fetchall())


async def verify_event_chain(conn: Connection, *, batch: int = 5000) -> ChainReport:
    """Recompute the event log's chain and compare it link by link with `catalog_event_chain`."""
    report = ChainReport("catalog_events")
    ((chained_head,),) = await _rows(conn, "SELECT coalesce(max(global_position), 0) FROM catalog_event_chain", ())
    ((log_head,),) = await _rows(conn, "SELECT coalesce(max(global_position), 0) FROM catalog_events", ())
    previous, expected = GENESIS, 1
    for start in range(0, chained_head, batch):
        end = min(chained_head, start + batch)
        rows = await _rows(conn, EVENT_ROWS, (start, end))
        links = dict(await _rows(conn, _LINKS, (start, end)))
        for row in rows:
            position = int(row[0])
            if position != expected:
                report.problems.append(f"events {expected}..{position - 1} are gone from the log")
                return report
            previous = link(previous, row)
            stored = links.get(position)
            if stored is None:
                report.problems.append(f"event {position} has no link: links were removed")
                return report
            if bytes(stored) != previous:
                report.problems.append(f"event {position} differs from what was chained: altered after it was recorded")
                return report
            report.checked, report.head_position, report.head = report.checked + 1, position, previous
            expected += 1
    if expected <= chained_head:
        report.problems.append(f"events {expected}..{chained_head} were chained but are gone from the log")
    report.unchained = max(0, int(log_head) - int(chained_head))
    return report


async def verify_access_chain(conn: Connection, *, batch: int = 5000) -> ChainReport:
    """Walk the access audit log in id order and recompute every row's link.

    Records older than the chain (before migration 0802) carry no link; once one record is linked every later
    one must be, and a log with records but not one link lost them all (the links were set to NULL).
    """
    report = ChainReport("access_audit_log")
    after, previous = 0, GENESIS
    while True:
        rows = await _rows(conn, ACCESS_ROWS, (after, batch))
        if not rows:
            if report.unchained and not report.checked:
                report.problems.append(
                    f"none of the {report.unchained} access records is linked: the links were removed"
                    " (unless every record predates the chain)"
                )
            return report
        for row in rows:
            after = int(row[0])
            digest = row[-1]
            if digest is None:
                if report.checked:  # only records older than the chain may lack a link
                    report.problems.append(f"access record {after} lost its link")
                    return report
                report.unchained += 1
                continue
            previous = link(previous, row[1:-1])
            if bytes(digest) != previous:
                report.problems.append(f"access record {after} differs from what was chained, or one before it is gone")
                return report
            report.checked, report.head_position, report.head = report.checked + 1, after, previous
