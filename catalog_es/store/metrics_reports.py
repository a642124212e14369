"""The metrics-report sink: reports are kept per table, newest first, at most `KEEP_PER_TABLE` of them.

Reports are observations, not catalog changes, so they never enter the event log.
"""

from __future__ import annotations

import uuid
from typing import Any

from catalog_es.store.database import Connection
from catalog_es.store.migrations import Migration, packaged_sql

KEEP_PER_TABLE = 100
KNOWN_REPORT_TYPES = ("scan-report", "commit-report")
METRICS_MIGRATIONS = (Migration("0301_table_metrics_reports", packaged_sql("catalog_es.store", "metrics_reports.sql")),)


async def record_metrics_report(
    conn: Connection, warehouse_id: uuid.UUID, table_id: uuid.UUID, report: dict[str, Any], raw: bytes
) -> None:
    """Store one report of any shape (`raw`, as sent) and drop the table's oldest beyond the bound."""
    report_type = report.get("report-type")
    async with conn.transaction():
        await conn.execute(
            "INSERT INTO table_metrics_reports (warehouse_id, table_id, report_type, report) VALUES (%s, %s, %s, %s)",
            (warehouse_id, table_id, report_type if report_type in KNOWN_REPORT_TYPES else "other", raw),
        )
        await conn.execute(
            "DELETE FROM table_metrics_reports WHERE table_id = %s AND id <= ("
            " SELECT id FROM table_metrics_reports WHERE table_id = %s ORDER BY id DESC OFFSET %s LIMIT 1)",
            (table_id, table_id, KEEP_PER_TABLE),
        )
