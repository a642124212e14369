"""One warehouse's slice of the log for the Iceberg REST Events endpoint: filtered, access-checked, paged in SQL."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from psycopg import sql

from catalog_es.privileges import IMPLIED_BY
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.migrations import Migration
from catalog_es.tabular_kind import TABULAR_KINDS


def _naming_list(actions: tuple[str, ...]) -> str:
    return ", ".join(f"'io.catalog-es.{kind.name}.{action}.v1'" for kind in TABULAR_KINDS for action in actions)


# The events that (re)name a table or view; an undrop may give it a new name (its old one taken meanwhile).
_NAMING_LIST = _naming_list(("created", "registered", "renamed", "undropped"))
ICEBERG_EVENTS_MIGRATIONS = (
    Migration(
        "0402_iceberg_events_indexes",
        # A warehouse's events in log order (the endpoint pages one warehouse), the naming events of a
        # stream (the name a table had at each event), and the events of one commit (request-event-count).
        "CREATE INDEX IF NOT EXISTS catalog_events_warehouse_position"
        " ON catalog_events ((data->>'warehouse_id'), global_position);"
        " CREATE INDEX IF NOT EXISTS catalog_events_naming ON catalog_events (stream_id, global_position)"
        f" WHERE type IN ({_naming_list(('created', 'registered', 'renamed'))});"
        " CREATE INDEX IF NOT EXISTS catalog_events_commit ON catalog_events (commit_id);",
    ),
    Migration(
        "0403_iceberg_events_naming_undropped",
        "DROP INDEX IF EXISTS catalog_events_naming;"
        " CREATE INDEX catalog_events_naming ON catalog_events (stream_id, global_position)"
        f" WHERE type IN ({_NAMING_LIST});",
    ),
)
_EVENT_COLUMNS = (
    "e.global_position, e.id, e.source, e.type, e.subject, e.time, e.datacontenttype, e.data, e.extensions,"
    " e.stream_id, e.stream_version, e.commit_id"
)
# `scanned` bounds the work of one request whatever the filters: a page may come back short (even empty)
# with a token past everything examined. Names are those the object had at the event (a later rename never
# leaks backwards): the stream's last naming event at or before it, and its namespace's creation event.
_QUERY = f"""
WITH head AS (SELECT position FROM catalog_event_counter),
scanned AS MATERIALIZED (
    SELECT global_position FROM catalog_events
    WHERE data->>'warehouse_id' = %(warehouse)s AND global_position > %(after)s
      AND global_position <= (SELECT position FROM head)
    ORDER BY global_position LIMIT %(scan)s),
described AS (
    SELECT {_EVENT_COLUMNS}, named.data->>'name' AS name,
           (SELECT array_agg(part ORDER BY i) FROM catalog_events c,
                   jsonb_array_elements_text(c.data->'namespace') WITH ORDINALITY AS p(part, i)
            WHERE c.stream_id = 'namespace-' || coalesce(named.data->>'namespace_id', e.data->>'namespace_id')
              AND c.stream_version = 1) AS namespace,
           (SELECT array_agg(part ORDER BY i) FROM catalog_events c,
                   jsonb_array_elements_text(c.data->'namespace') WITH ORDINALITY AS p(part, i)
            WHERE c.stream_id = 'namespace-' || (e.data->>'from_namespace_id')
              AND c.stream_version = 1) AS source_namespace,
           e.data->>'from_name' AS source_name,
           coalesce(named.data->>'namespace_id', e.data->>'namespace_id') AS namespace_id
    FROM scanned s JOIN catalog_events e ON e.global_position = s.global_position
    LEFT JOIN LATERAL (
        SELECT n.data FROM catalog_events n
        WHERE n.stream_id = e.stream_id AND n.global_position <= e.global_position AND n.type IN ({_NAMING_LIST})
        ORDER BY n.global_position DESC LIMIT 1) named ON true),
matched AS (
    SELECT * FROM described d WHERE {{conditions}} ORDER BY d.global_position LIMIT %(page)s),
commits AS (
    SELECT r.commit_id, count(*) AS events FROM catalog_events r
    WHERE r.commit_id IN (SELECT DISTINCT commit_id FROM matched) GROUP BY r.commit_id)
SELECT (SELECT position FROM head), (SELECT count(*) FROM scanned), (SELECT max(global_position) FROM scanned),
       m.*, c.events
FROM (SELECT 1) AS one LEFT JOIN (matched m JOIN commits c ON c.commit_id = m.commit_id) ON true
ORDER BY m.global_position
"""
# The caller may describe the object: through a grant on it or an ancestor; for a dropped object (gone from
# the permissions model with its own grants) on the namespace it was in, or else on the warehouse.
_DESCRIBABLE = """EXISTS (
    SELECT 1 FROM authz_grants g
    WHERE g.principal = ANY(%(principals)s) AND g.privilege = ANY(%(implying)s)
      AND g.object_id = ANY(coalesce(
        (SELECT o.ancestors FROM authz_objects o WHERE o.id = substr(d.stream_id, strpos(d.stream_id, '-') + 1)::uuid),
        (SELECT o.ancestors FROM authz_objects o WHERE o.id = d.namespace_id::uuid),
        (SELECT o.ancestors FROM authz_objects o WHERE o.id = (d.data->>'warehouse_id')::uuid))))"""
_BY_NAME = """(d.namespace[1:{k}] = {ident} OR d.source_namespace[1:{k}] = {ident}
    OR (d.namespace = {parent} AND d.name = {leaf}) OR (d.source_namespace = {parent} AND d.source_name = {leaf}))"""


class EventQuery(msgspec.Struct, frozen=True, kw_only=True):
    """What the caller asks for, already validated; every given criterion must hold.

    `principals` None: the caller may describe everything in the warehouse (no per-event check).
    """

    warehouse_id: uuid.UUID
    after: int = 0
    page_size: int = 100
    scan_limit: int = 10_000
    since: datetime | None = None  # the earliest time an event may have
    types: list[str] | None = None
    object_kinds: list[str] | None = None
    object_ids: list[uuid.UUID] | None = None
    names: list[list[str]] | None = None
    principals: list[str] | None = None

    def conditions(self) -> tuple[sql.Composable, dict[str, Any]]:
        clauses: list[sql.Composable] = [sql.SQL("true")]
        params: dict[str, Any] = {}
        if self.since is not None:
            clauses.append(sql.SQL("d.time >= %(since)s"))
            params["since"] = self.since
        if self.types is not None:
            clauses.append(sql.SQL("d.type = ANY(%(types)s)"))
            params["types"] = self.types
        if self.object_kinds is not None:
            # Every stream id ends with `-<uuid>` (37 characters); a kind may hold a dash (`service-principal`).
            clauses.append(sql.SQL("left(d.stream_id, -37) = ANY(%(kinds)s)"))
            params["kinds"] = self.object_kinds
        if self.object_ids is not None:
            clauses.append(sql.SQL("right(d.stream_id, 36) = ANY(%(ids)s)"))
            params["ids"] = [str(object_id) for object_id in self.object_ids]
        if self.names is not None:
            alternatives: list[sql.Composable] = [sql.SQL("false")]
            for i, parts in enumerate(self.names):
                ident, parent, leaf = f"name_{i}", f"parent_{i}", f"leaf_{i}"
                params.update({ident: parts, parent: parts[:-1], leaf: parts[-1]})
                alternatives.append(
                    sql.SQL(_BY_NAME).format(
                        k=sql.Literal(len(parts)),
                        ident=sql.SQL(f"%({ident})s::text[]"),
                        parent=sql.SQL(f"%({parent})s::text[]"),
                        leaf=sql.SQL(f"%({leaf})s"),
                    )
                )
            clauses.append(sql.SQL("({})").format(sql.SQL(" OR ").join(alternatives)))
        if self.principals is not None:
            clauses.append(sql.SQL(_DESCRIBABLE))
            params.update(principals=self.principals, implying=list(IMPLIED_BY["describe"]))
        return sql.SQL(" AND ").join(clauses), params


class LoggedEvent(msgspec.Struct, frozen=True, kw_only=True):
    """A recorded event with the names its object had then, and how many events its commit recorded."""

    recorded: RecordedEvent
    namespace: list[str] | None
    name: str | None
    source_namespace: list[str] | None
    source_name: str | None
    commit_event_count: int


class EventSlice(msgspec.Struct, frozen=True):
    """Matching events in log order; `last_position` is where the next request resumes (everything up to it
    was examined), `head` the log's last position when this was read."""

    events: list[LoggedEvent]
    last_position: int
    head: int


async def read_iceberg_events(conn: Connection, query: EventQuery) -> EventSlice:
    """One statement, hence one snapshot: the head and the rows agree, so resuming after `last_position`
    neither skips nor repeats an event (positions follow commit order; later commits land above the head)."""
    conditions, params = query.conditions()
    statement = sql.SQL(_QUERY).format(conditions=conditions)
    params.update(warehouse=str(query.warehouse_id), after=query.after, scan=query.scan_limit, page=query.page_size)
    cursor = await conn.execute(statement, params)
    rows = await cursor.fetchall()
    head, scanned, last_scanned = int(rows[0][0]), int(rows[0][1]), rows[0][2]
    events = [
        LoggedEvent(
            recorded=RecordedEvent(*row[3:15]),
            name=row[15],
            namespace=row[16],
            source_namespace=row[17],
            source_name=row[18],
            commit_event_count=int(row[20]),
        )
        for row in rows
        if row[3] is not None
    ]
    if len(events) == query.page_size:
        last = events[-1].recorded.position
    elif scanned == query.scan_limit:
        last = int(last_scanned)
    else:
        last = max(head, query.after)
    return EventSlice(events, last, head)


async def first_position_after(conn: Connection, since: datetime) -> int:
    """Where a read filtered to events from `since` on may start: before the first such event (or at the head).

    Only a shortcut: events before it are older and filtered out anyway.
    """
    cursor = await conn.execute(
        "SELECT coalesce((SELECT min(global_position) - 1 FROM catalog_events WHERE time >= %s),"
        " (SELECT position FROM catalog_event_counter))",
        (since,),
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0
