"""What `catalog-es audit history` prints for a person: entity names, not stream ids, and readable changes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from catalog_es.events import (
    NamespaceCreated,
    ProjectCreated,
    ProjectRenamed,
    TableCommitted,
    TableRenamed,
    ViewRenamed,
    WarehouseCreated,
    WarehouseRenamed,
    current_type,
)
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from projections.audit.history import history_entry

# The events that give a stream its (latest) name; tables and views are named by their create/register/rename.
_NAME_QUERY = b"""
SELECT DISTINCT ON (stream_id) stream_id, data->>'name', data->>'namespace_id', data->'namespace'
FROM catalog_events
WHERE stream_id = ANY(%s) AND (data ? 'name' OR type = %s)
ORDER BY stream_id, global_position DESC
"""
_NAMESPACE_QUERY = b"""
SELECT data->>'namespace_id', data->'namespace' FROM catalog_events WHERE type = %s AND data->>'namespace_id' = ANY(%s)
"""


async def entity_names(conn: Connection, events: Iterable[RecordedEvent]) -> dict[str, str]:
    """Each stream's latest name, `sales.orders` for a table: what an operator typed, not `table-<uuid>`."""
    streams = sorted({event.stream_id for event in events})
    cursor = await conn.execute(_NAME_QUERY, (streams, NamespaceCreated.type_name))
    rows = await cursor.fetchall()
    cursor = await conn.execute(
        _NAMESPACE_QUERY, (NamespaceCreated.type_name, sorted({row[2] for row in rows if row[2] is not None}))
    )
    namespaces = {namespace_id: ".".join(parts) for namespace_id, parts in await cursor.fetchall()}
    names: dict[str, str] = {}
    for stream_id, name, namespace_id, parts in rows:
        if parts is not None and name is None:
            names[stream_id] = ".".join(parts)
        elif namespace_id in namespaces:
            names[stream_id] = f"{namespaces[namespace_id]}.{name}"
        elif name is not None:
            names[stream_id] = name
    return names


def _commit_details(data: dict[str, Any]) -> list[str]:
    """Rows and files appended, read from the commit's snapshots (columns are in the change summary)."""
    details: list[str] = []
    for update in data.get("updates", []):
        if update.get("action") == "add-snapshot":
            summary = update.get("snapshot", {}).get("summary", {})
            records, files = summary.get("added-records"), summary.get("added-data-files")
            if records is not None or files is not None:
                details.append(f"+{records or 0} rows in {files or 0} files ({summary.get('operation', 'append')})")
    return details


def describe(event: RecordedEvent, document: dict[str, Any] | None = None) -> str:
    """One line: the change summary (columns too), plus rows added, or `old → new` for a rename."""
    data = event.data
    if event.type in (TableRenamed.type_name, ViewRenamed.type_name):
        return f"{data.get('from_name')} → {data.get('name')}"
    if event.type in (WarehouseRenamed.type_name, ProjectRenamed.type_name):
        return f"→ {data.get('name')}"
    if event.type in (WarehouseCreated.type_name, ProjectCreated.type_name):
        return f"name {data.get('name')}"
    entry = history_entry(event, document)
    parts = [entry.summary.describe()] if entry.summary and entry.summary.describe() else []
    if current_type(event.type) == TableCommitted.type_name:
        parts += _commit_details(data)
    return "; ".join(parts)
