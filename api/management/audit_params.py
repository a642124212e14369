"""Audit query parameters as users type them (ISO-8601 times, ids or names) turned into log filters."""

from __future__ import annotations

import uuid
from datetime import datetime

from catalog_es.clock import parse_instant
from catalog_es.errors import BadRequestError
from catalog_es.events.base import split_stream_id
from projections.audit.history import EventFilter, entity_stream, event_type, history_streams


def parse_time(value: str, name: str = "time") -> datetime:
    """An ISO-8601 instant; without an offset it is UTC.

    Raises:
        BadRequestError: not ISO-8601.
    """
    try:
        return parse_instant(value)
    except ValueError:
        raise BadRequestError(f"Invalid {name} {value!r}: expected ISO-8601, e.g. 2026-01-31T12:00:00Z") from None


_ENTITY_KINDS = ("project", "warehouse", "namespace", "table", "view")


def parse_entity(entity: str) -> str:
    """An entity's stream id, `<kind>-<uuid>` (e.g. `table-…`), checked.

    Raises:
        BadRequestError: not `<kind>-<uuid>` with a known kind.
    """
    kind, value = split_stream_id(entity)
    if kind not in _ENTITY_KINDS:
        raise BadRequestError(f"Invalid entity {entity!r}: expected <kind>-<uuid>, kind one of {_ENTITY_KINDS}")
    return entity_stream(kind, value)


def _as_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def event_filter(
    *,
    warehouse: str | None = None,
    namespace: list[str] | None = None,
    table: str | None = None,
    view: str | None = None,
    entity: str | None = None,
    types: list[str] | None = None,
    actor: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> EventFilter:
    """`namespace` is its parts, or one part holding the namespace id; `table`/`view` an id, a name or a dotted
    identifier (`sales.orders`: its last part is the name, the rest the namespace unless one is given).

    Raises:
        BadRequestError: a malformed time or id, or an unknown event type.
    """
    streams: list[str] = []
    names: dict[str, str] = {}
    for kind, value in (("table", table), ("view", view)):
        if value is None:
            continue
        if _as_uuid(value) is not None:
            streams.extend(history_streams(entity_stream(kind, value)))  # a table's maintenance jobs too
            continue
        *parents, names[kind] = value.split(".")
        if parents and not namespace:
            namespace = parents
    namespace_id = _as_uuid(namespace[0]) if namespace and len(namespace) == 1 else None
    if entity is not None:
        streams.append(parse_entity(entity))
    return EventFilter(
        warehouse=warehouse,
        namespace=None if namespace_id or not namespace else namespace,
        namespace_id=namespace_id,
        stream_ids=streams,
        table_name=names.get("table"),
        view_name=names.get("view"),
        types=[event_type(name) for name in types or []],
        actor=actor,
        since=parse_time(since, "since") if since else None,
        until=parse_time(until, "until") if until else None,
    )
