"""Filtered, cursor-paginated reads of the event log, and one entity's history with change summaries."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from psycopg import sql

from catalog_es.errors import BadRequestError
from catalog_es.events import (
    EVENT_TYPES,
    Json,
    NamespaceCreated,
    TableCommitted,
    ViewCommitted,
    WarehouseCreated,
)
from catalog_es.events.base import split_stream_id
from catalog_es.events.maintenance import MaintenanceJobEvent, MaintenanceJobFinished, MaintenanceJobStarted
from catalog_es.events.registry import full_type, types_of
from catalog_es.events.upcasting import current_type, stored_types
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.logged_documents import recorded_metadata
from catalog_es.store.migrations import Migration
from catalog_es.tabular_kind import TABULAR_KINDS
from projections.audit.change_summary import ChangeSummary, summarize_maintenance_job, summarize_updates
from projections.cloudevents import cloudevent

MAX_PAGE_SIZE = 1000
EVENT_HISTORY_MIGRATIONS = (
    Migration(
        "0401_event_history_indexes",
        "CREATE INDEX IF NOT EXISTS catalog_events_time ON catalog_events (time);"
        " CREATE INDEX IF NOT EXISTS catalog_events_namespace_id ON catalog_events ((data->>'namespace_id'));",
    ),
)
_COLUMNS = (
    "global_position, id, source, type, subject, time, datacontenttype, data, extensions,"
    " stream_id, stream_version, commit_id"
)
_JOBS_PREFIX = f"{MaintenanceJobEvent.stream_kind}-"
_CREATING_TYPES = frozenset(name for kind in TABULAR_KINDS for name in types_of(kind.name, "created", "registered"))
_EVER_NAMED = "stream_id IN (SELECT stream_id FROM catalog_events WHERE type = ANY(%s) AND data->>'name' = %s)"
# A table's maintenance jobs are recorded in a stream of their own, `maintenance-<table id>` (see history_streams):
# with each stream a table's named or namespaced events lie in, the one of its jobs.
_WITH_JOBS = (
    "SELECT s FROM catalog_events e, LATERAL (VALUES (e.stream_id), (regexp_replace(e.stream_id, '^table-', %s))) v(s)"
)
_TABLE_EVER_NAMED = f"stream_id IN ({_WITH_JOBS} WHERE e.type = ANY(%s) AND e.data->>'name' = %s)"


class InvalidEventFilterError(BadRequestError):
    """A filter value that cannot match anything by construction (unknown type, bad id)."""


def event_type(name: str) -> str:
    """A type by its full name or short form (`table.committed`).

    Raises:
        InvalidEventFilterError: no such event type.
    """
    full = full_type(name)
    if full is None:
        raise InvalidEventFilterError(f"Unknown event type {name!r}; known: {', '.join(sorted(EVENT_TYPES))}")
    return full


def entity_stream(kind: str, value: str) -> str:
    """`table-<uuid>` for a table id (and likewise views, namespaces).

    Raises:
        InvalidEventFilterError: `value` is not a UUID.
    """
    try:
        return f"{kind}-{uuid.UUID(value)}"
    except ValueError:
        raise InvalidEventFilterError(f"Invalid {kind} id {value!r}") from None


class EventFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Every given criterion must hold. Names match what an entity was ever called, so dropped and
    renamed entities stay findable; `table_name` is the last part of an identifier."""

    warehouse: str | None = None  # id or name
    namespace: list[str] | None = None  # parts
    namespace_id: uuid.UUID | None = None
    stream_ids: list[str] = []
    table_name: str | None = None
    view_name: str | None = None
    types: list[str] = []
    actor: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def where(self) -> tuple[sql.Composable, list[Any]]:
        clauses: list[sql.Composable] = [sql.SQL("global_position > %s")]
        params: list[Any] = []
        if self.warehouse is not None:
            clauses.append(
                sql.SQL(
                    "(data->>'warehouse_id' = %s OR data->>'warehouse_id' IN (SELECT data->>'warehouse_id'"
                    " FROM catalog_events WHERE type = %s AND data->>'name' = %s))"
                )
            )
            params += [self.warehouse, WarehouseCreated.type_name, self.warehouse]
        namespace_ids = self._namespace_ids()
        if namespace_ids is not None:
            query, values = namespace_ids
            clauses.append(
                sql.SQL(
                    "(data->>'namespace_id' IN ({0}) OR data->>'from_namespace_id' IN ({0}) OR stream_id IN"
                    " ({1} WHERE e.data->>'namespace_id' IN ({0})))"
                ).format(query, sql.SQL(_WITH_JOBS))
            )
            params += values * 2 + [_JOBS_PREFIX, *values]
        if self.stream_ids:
            clauses.append(sql.SQL("stream_id = ANY(%s)"))
            params.append(self.stream_ids)
        if self.table_name is not None:
            clauses.append(sql.SQL(_TABLE_EVER_NAMED))
            params += [
                _JOBS_PREFIX,
                types_of("table", "created", "registered", "renamed", "undropped"),
                self.table_name,
            ]
        if self.view_name is not None:
            clauses.append(sql.SQL(_EVER_NAMED))
            params += [types_of("view", "created", "registered", "renamed", "undropped"), self.view_name]
        if self.types:
            clauses.append(sql.SQL("type = ANY(%s)"))
            params.append([stored for name in self.types for stored in stored_types(current_type(event_type(name)))])
        if self.actor is not None:
            clauses.append(sql.SQL("extensions->>'actor' = %s"))
            params.append(self.actor)
        if self.since is not None:
            clauses.append(sql.SQL("time >= %s"))
            params.append(self.since)
        if self.until is not None:
            clauses.append(sql.SQL("time < %s"))
            params.append(self.until)
        return sql.SQL(" AND ").join(clauses), params

    def _namespace_ids(self) -> tuple[sql.Composable, list[Any]] | None:
        if self.namespace_id is not None:
            return sql.SQL("%s"), [str(self.namespace_id)]
        if self.namespace is None:
            return None
        query = sql.SQL(
            "SELECT data->>'namespace_id' FROM catalog_events WHERE type = %s AND data->'namespace' = %s::jsonb"
        )
        return query, [NamespaceCreated.type_name, msgspec.json.encode(self.namespace).decode()]


class EventPage(msgspec.Struct, frozen=True):
    events: list[RecordedEvent]
    next_after: int | None


async def read_event_page(conn: Connection, where: EventFilter, *, after: int = 0, limit: int = 100) -> EventPage:
    """Matching events in log order after position `after`; `next_after` is the cursor of the next page."""
    limit = max(1, min(limit, MAX_PAGE_SIZE))
    condition, params = where.where()
    query = sql.SQL("SELECT {} FROM catalog_events WHERE {} ORDER BY global_position LIMIT %s").format(
        sql.SQL(_COLUMNS), condition
    )
    cursor = await conn.execute(query, [after, *params, limit + 1])
    events = [RecordedEvent(*row) for row in await cursor.fetchall()]
    if len(events) <= limit:
        return EventPage(events, None)
    return EventPage(events[:limit], events[limit - 1].position)


class HistoryEntry(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """One change of an entity: when, who, what (the event type) and, for tables and views, its effect."""

    position: int
    time: datetime
    actor: str
    type: str
    stream_version: int
    metadata_location: str | None = None
    summary: ChangeSummary | None = None


def history_entry(event: RecordedEvent, document: Json | None = None) -> HistoryEntry:
    """`document`: the metadata a commit that records its change (not the document) produced, where the summary
    compares schemas (see `commit_documents`)."""
    data = event.data
    summary: ChangeSummary | None = None
    if current_type(event.type) in (TableCommitted.type_name, ViewCommitted.type_name):
        summary = summarize_updates(
            data.get("updates", []),
            data.get("metadata") or document,
            data.get("rebased"),
            data.get("requirements"),
            data.get("assigned_ids"),
        )
    elif event.type in (MaintenanceJobStarted.type_name, MaintenanceJobFinished.type_name):
        summary = summarize_maintenance_job(data, finished=event.type == MaintenanceJobFinished.type_name)
    elif event.type in _CREATING_TYPES:
        metadata = data.get("metadata", {})
        summary = summarize_updates(data.get("updates", []), metadata)
        if not data.get("updates"):
            summary = ChangeSummary(
                current_schema_id=metadata.get("current-schema-id"),
                properties_set=dict(metadata.get("properties", {})),
                location=metadata.get("location"),
            )
    return HistoryEntry(
        position=event.position,
        time=event.time,
        actor=cloudevent(event).get_extension("actor"),
        type=event.type,
        stream_version=event.stream_version,
        metadata_location=data.get("metadata_location"),
        summary=summary,
    )


def history_streams(stream_id: str) -> list[str]:
    """The streams of one entity's history: a table's includes the maintenance jobs run on it (their own
    stream, so that recording a job never races the table's commits)."""
    kind, entity_id = split_stream_id(stream_id)
    return [stream_id, f"{MaintenanceJobEvent.stream_kind}-{entity_id}"] if kind == "table" else [stream_id]


async def entity_history(conn: Connection, stream_id: str) -> list[HistoryEntry]:
    """Every change of one entity (a stream such as `table-<uuid>`), oldest first."""
    cursor = await conn.execute(
        f"SELECT {_COLUMNS} FROM catalog_events WHERE stream_id = ANY(%s) ORDER BY global_position".encode(),
        (history_streams(stream_id),),
    )
    events = [RecordedEvent(*row) for row in await cursor.fetchall()]
    documents = await commit_documents(conn, events)
    return [history_entry(event, documents.get(event.position)) for event in events]


async def commit_documents(conn: Connection, events: list[RecordedEvent]) -> dict[int, Json]:
    """By position: the documents of the commits among `events` that add a schema and record only the change
    (`table.committed.v2`), rebuilt from the log, so that their summary names the columns they changed."""
    found: dict[int, Json] = {}
    for event in events:
        data = event.data
        if (
            current_type(event.type) == TableCommitted.type_name
            and "metadata" not in data
            and any(update.get("action") == "add-schema" for update in data.get("updates", []))
        ):
            document = await recorded_metadata(conn, event.stream_id, str(data["metadata_location"]))
            if document is not None:
                found[event.position] = document
    return found
