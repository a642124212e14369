"""The `log_chain` projection: each event's link in the log's hash chain (catalog_es.store.hash_chain).

It follows the log like any process projection, but it is never rebuilt from the log (that would bless an
altered log); `catalog-es audit verify` recomputes it and reports where the log and the chain part ways.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.hash_chain import EVENT_ROWS, GENESIS, link
from catalog_es.store.migrations import Migration

CHAIN_TABLES = ("catalog_event_chain",)
CHAIN_MIGRATIONS = (
    Migration(
        "0803_catalog_event_chain",
        """
        CREATE TABLE IF NOT EXISTS catalog_event_chain (
            global_position bigint PRIMARY KEY,
            digest bytea NOT NULL
        );
        """,
    ),
)


async def chain_events(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Link a contiguous batch of events, reading them back as stored (the chain covers the stored row)."""
    if not events:
        return
    first, last = events[0].position, events[-1].position
    previous = GENESIS
    if first > 1:
        cursor = await conn.execute("SELECT digest FROM catalog_event_chain WHERE global_position = %s", (first - 1,))
        row = await cursor.fetchone()
        if row is None:
            raise RuntimeError(f"the hash chain has no link for event {first - 1}: it cannot continue at {first}")
        previous = bytes(row[0])
    cursor = await conn.execute(EVENT_ROWS.encode(), (first - 1, last))
    links: list[tuple[int, bytes]] = []
    for stored in await cursor.fetchall():
        previous = link(previous, stored)
        links.append((int(stored[0]), previous))
    async with conn.cursor() as insert:
        await insert.executemany("INSERT INTO catalog_event_chain (global_position, digest) VALUES (%s, %s)", links)
