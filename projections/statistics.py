"""The `catalog_statistics` read model: per warehouse, live namespaces, tables, views, commits and last change."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from catalog_es.events import (
    NamespaceCreated,
    NamespaceDropped,
    TableCommitted,
    TableCreated,
    TableDropped,
    TableRegistered,
    ViewCommitted,
    ViewCreated,
    ViewDropped,
    ViewRegistered,
    WarehouseCreated,
)
from catalog_es.events.lifecycle import (
    NamespaceSoftDropped,
    NamespaceUndropped,
    TableSoftDropped,
    TableUndropped,
    ViewSoftDropped,
    ViewUndropped,
)
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.migrations import Migration

STATISTICS_TABLES = ("catalog_statistics",)
STATISTICS_MIGRATIONS = (
    Migration(
        "0502_catalog_statistics",
        """
        CREATE TABLE IF NOT EXISTS catalog_statistics (
            warehouse_id uuid PRIMARY KEY,
            namespaces bigint NOT NULL DEFAULT 0,
            tables bigint NOT NULL DEFAULT 0,
            views bigint NOT NULL DEFAULT 0,
            commits bigint NOT NULL DEFAULT 0,
            events bigint NOT NULL DEFAULT 0,
            last_position bigint NOT NULL DEFAULT 0,
            last_change timestamptz
        );
        """,
    ),
)

# (namespaces, tables, views, commits) each event type adds to its warehouse's counts.
_DELTAS: dict[type, tuple[int, int, int, int]] = {
    WarehouseCreated: (0, 0, 0, 0),
    NamespaceCreated: (1, 0, 0, 0),
    NamespaceDropped: (-1, 0, 0, 0),
    TableCreated: (0, 1, 0, 0),
    TableRegistered: (0, 1, 0, 0),
    TableDropped: (0, -1, 0, 0),
    TableCommitted: (0, 0, 0, 1),
    ViewCreated: (0, 0, 1, 0),
    ViewRegistered: (0, 0, 1, 0),
    ViewDropped: (0, 0, -1, 0),
    ViewCommitted: (0, 0, 0, 1),
    # Soft-dropped objects are not live; expiring them changes nothing more.
    NamespaceSoftDropped: (-1, 0, 0, 0),
    NamespaceUndropped: (1, 0, 0, 0),
    TableSoftDropped: (0, -1, 0, 0),
    TableUndropped: (0, 1, 0, 0),
    ViewSoftDropped: (0, 0, -1, 0),
    ViewUndropped: (0, 0, 1, 0),
}

_UPSERT = (
    "INSERT INTO catalog_statistics AS s (warehouse_id, namespaces, tables, views, commits, events, last_position,"
    " last_change) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (warehouse_id) DO UPDATE SET"
    " namespaces = s.namespaces + excluded.namespaces, tables = s.tables + excluded.tables,"
    " views = s.views + excluded.views, commits = s.commits + excluded.commits, events = s.events + excluded.events,"
    " last_position = excluded.last_position, last_change = excluded.last_change"
)


async def project_statistics(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Sum the batch per warehouse in memory, then one upsert per warehouse touched (events without one are skipped)."""
    totals: dict[str, list[int]] = {}
    last: dict[str, tuple[int, datetime]] = {}
    for recorded in events:
        warehouse = recorded.data.get("warehouse_id")
        if warehouse is None:
            continue  # a project: not inside a warehouse
        delta = _DELTAS.get(type(recorded.decode()), (0, 0, 0, 0))
        sums = totals.setdefault(str(warehouse), [0, 0, 0, 0, 0])
        for index, value in enumerate((*delta, 1)):
            sums[index] += value
        last[str(warehouse)] = (recorded.position, recorded.time)
    for warehouse, sums in totals.items():
        await conn.execute(_UPSERT, (warehouse, *sums, *last[warehouse]))
