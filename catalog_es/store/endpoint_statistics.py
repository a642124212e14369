"""Per-endpoint call counts by hour, status and warehouse (Lakekeeper's endpoint statistics): request telemetry
kept outside the event log, like the access log; each API process adds its buffered counts to the same rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import msgspec

from catalog_es.store.database import Connection
from catalog_es.store.migrations import Migration

_NO_WAREHOUSE = "00000000-0000-0000-0000-000000000000"  # the unique key's stand-in for "no warehouse"

ENDPOINT_STATISTICS_MIGRATIONS = (
    Migration(
        "0901_endpoint_statistics",
        f"""
        CREATE TABLE IF NOT EXISTS endpoint_statistics (
            project_id uuid NOT NULL,
            warehouse_id uuid,
            http_route text NOT NULL,
            status_code integer NOT NULL,
            hour timestamptz NOT NULL,
            count bigint NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz
        );
        CREATE UNIQUE INDEX IF NOT EXISTS endpoint_statistics_key ON endpoint_statistics
            (project_id, coalesce(warehouse_id, '{_NO_WAREHOUSE}'), http_route, status_code, hour);
        CREATE INDEX IF NOT EXISTS endpoint_statistics_hour ON endpoint_statistics (hour);
        """,
    ),
)

_ADD = f"""
INSERT INTO endpoint_statistics AS s (project_id, warehouse_id, http_route, status_code, hour, count, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (project_id, coalesce(warehouse_id, '{_NO_WAREHOUSE}'), http_route, status_code, hour)
DO UPDATE SET count = s.count + excluded.count, updated_at = %s
"""


class EndpointCount(msgspec.Struct, frozen=True):
    """Calls of one route answered with one status, for one project and warehouse (None: none), in one hour."""

    project_id: uuid.UUID
    warehouse_id: uuid.UUID | None
    http_route: str  # `METHOD /path/{template}`
    status_code: int
    hour: datetime
    count: int
    first_at: datetime
    last_at: datetime


async def add_counts(conn: Connection, counts: Sequence[EndpointCount]) -> None:
    """Add buffered counts to their hour's rows (one statement each, in the caller's transaction)."""
    for c in counts:
        params = (c.project_id, c.warehouse_id, c.http_route, c.status_code, c.hour, c.count, c.first_at, c.last_at)
        await conn.execute(_ADD, params)


class EndpointStatisticRow(msgspec.Struct, frozen=True):
    hour: datetime
    warehouse_id: uuid.UUID | None
    warehouse_name: str | None
    http_route: str
    status_code: int
    count: int
    created_at: datetime
    updated_at: datetime | None


# `warehouses`: the ids the caller may see (a project's warehouse rows are those whose warehouse is in it);
# `unmapped`: also the project's calls that named no warehouse.
_READ = """
SELECT s.hour, s.warehouse_id, w.name, s.http_route, s.status_code, s.count, s.created_at, s.updated_at
FROM endpoint_statistics s LEFT JOIN warehouses w ON w.id = s.warehouse_id
WHERE s.hour >= %(start)s AND s.hour < %(end)s
  AND (s.warehouse_id = ANY(%(warehouses)s) OR (%(unmapped)s AND s.warehouse_id IS NULL AND s.project_id = %(project)s))
  AND (%(statuses)s::integer[] IS NULL OR s.status_code = ANY(%(statuses)s))
ORDER BY s.hour, s.http_route, s.status_code, s.warehouse_id NULLS FIRST
"""


async def read_counts(
    conn: Connection,
    project_id: uuid.UUID,
    start: datetime,
    end: datetime,
    warehouses: Sequence[uuid.UUID],
    *,
    unmapped: bool,
    statuses: Sequence[int] | None,
) -> list[EndpointStatisticRow]:
    """The rows of the hours starting in [start, end), oldest first."""
    params = {
        "start": start,
        "end": end,
        "warehouses": list(warehouses),
        "unmapped": unmapped,
        "project": project_id,
        "statuses": list(statuses) if statuses is not None else None,
    }
    cursor = await conn.execute(_READ.encode(), params)
    return [EndpointStatisticRow(*row) for row in await cursor.fetchall()]
