"""The `catalog_statistics` read model: per warehouse, live namespaces, tables, views, commits and last change."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import msgspec

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

STATISTICS_TABLES = ("catalog_statistics", "catalog_statistics_hourly")
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
    Migration(
        "0504_catalog_statistics_hourly",
        """
        CREATE TABLE IF NOT EXISTS catalog_statistics_hourly (
            warehouse_id uuid NOT NULL,
            hour timestamptz NOT NULL,
            tables bigint NOT NULL,
            views bigint NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (warehouse_id, hour)
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


_HOURLY = (
    "INSERT INTO catalog_statistics_hourly AS h (warehouse_id, hour, tables, views, updated_at)"
    " SELECT warehouse_id, %s, tables, views, %s FROM catalog_statistics WHERE warehouse_id = %s"
    " ON CONFLICT (warehouse_id, hour) DO UPDATE SET tables = excluded.tables, views = excluded.views,"
    " updated_at = excluded.updated_at"
)


async def project_statistics(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Sum the batch per warehouse and hour in memory, then per (warehouse, hour) in log order one upsert of the
    totals and one of the hour's snapshot of them (events without a warehouse are skipped).

    An hour's row holds the counts after its last event, stamped with that event's time (Lakekeeper's statistics:
    a row per hour in which something changed, none for a quiet hour); replay writes the same rows.
    """
    totals: dict[tuple[str, datetime], list[int]] = {}
    last: dict[tuple[str, datetime], tuple[int, datetime]] = {}
    for recorded in events:
        warehouse = recorded.data.get("warehouse_id")
        if warehouse is None:
            continue  # a project: not inside a warehouse
        key = (str(warehouse), recorded.time.replace(minute=0, second=0, microsecond=0))
        delta = _DELTAS.get(type(recorded.decode()), (0, 0, 0, 0))
        sums = totals.setdefault(key, [0, 0, 0, 0, 0])
        for index, value in enumerate((*delta, 1)):
            sums[index] += value
        last[key] = (recorded.position, recorded.time)
    for (warehouse, hour), sums in totals.items():
        position, time = last[(warehouse, hour)]
        await conn.execute(_UPSERT, (warehouse, *sums, position, time))
        await conn.execute(_HOURLY, (hour, time, warehouse))


class WarehouseStatistics(msgspec.Struct, frozen=True):
    """Counts of one hour in which the warehouse changed, as they stood after its last change."""

    hour: datetime
    tables: int
    views: int
    updated_at: datetime


async def warehouse_statistics(
    conn: Connection, warehouse_id: uuid.UUID, before: datetime | None, limit: int
) -> list[WarehouseStatistics]:
    """The newest hours first; `before` (exclusive) continues a page."""
    cursor = await conn.execute(
        "SELECT hour, tables, views, updated_at FROM catalog_statistics_hourly WHERE warehouse_id = %s"
        " AND (%s::timestamptz IS NULL OR hour < %s) ORDER BY hour DESC LIMIT %s",
        (warehouse_id, before, before, limit),
    )
    return [WarehouseStatistics(*row) for row in await cursor.fetchall()]
