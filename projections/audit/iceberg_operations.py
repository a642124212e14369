"""A logged event as the Iceberg REST Events draft's `Event`: its CloudEvent envelope and a catalog operation."""

from __future__ import annotations

from typing import Any

from catalog_es.clock import millis
from catalog_es.events import (
    NamespaceCreated,
    NamespaceDropped,
    NamespacePropertiesUpdated,
    TableCommitted,
    TableCreated,
    TableDropped,
    TableRegistered,
    TableRenamed,
    ViewCommitted,
    ViewCreated,
    ViewDropped,
    ViewRegistered,
    ViewRenamed,
    current_type,
)
from catalog_es.events.base import TYPE_PREFIX, parse_type_name, split_stream_id
from projections.audit.iceberg_events import LoggedEvent
from projections.cloudevents import cloudevent

Json = dict[str, Any]
CUSTOM = "custom"
CUSTOM_PREFIX = "x-catalog-es-"

# Our stable event types → the draft's operation types; every other type is `custom`.
OPERATIONS: dict[str, str] = {
    TableCreated.type_name: "create-table",
    TableRegistered.type_name: "register-table",
    TableCommitted.type_name: "update-table",
    TableRenamed.type_name: "rename-table",
    TableDropped.type_name: "drop-table",
    ViewCreated.type_name: "create-view",
    ViewRegistered.type_name: "register-view",
    ViewCommitted.type_name: "update-view",
    ViewRenamed.type_name: "rename-view",
    ViewDropped.type_name: "drop-view",
    NamespaceCreated.type_name: "create-namespace",
    NamespacePropertiesUpdated.type_name: "update-namespace-properties",
    NamespaceDropped.type_name: "drop-namespace",
}
OPERATION_TYPES = frozenset({*OPERATIONS.values(), CUSTOM})


def custom_type(event_type: str) -> str:
    """`io.catalog-es.warehouse.renamed.v1` → `x-catalog-es-warehouse.renamed` (the short form the CLI takes)."""
    parsed = parse_type_name(event_type)
    return CUSTOM_PREFIX + (f"{parsed[0]}.{parsed[1]}" if parsed else event_type.removeprefix(TYPE_PREFIX))


def actor(name: str) -> Json:
    """The draft leaves the actor's shape open; Lakekeeper's is `{"type": "principal", "principal": id}`."""
    if name in ("anonymous", "system"):
        return {"type": name}
    return {"type": "principal", "principal": name}


def _identifier(namespace: list[str] | None, name: str | None) -> Json:
    return {"namespace": namespace or [], "name": name or ""}


def _view_creation_updates(metadata: Json) -> list[Json]:
    """The updates a client sends to create this view (the view event records only their result)."""
    updates: list[Json] = [
        {"action": "assign-uuid", "uuid": metadata.get("view-uuid")},
        {"action": "upgrade-format-version", "format-version": metadata.get("format-version", 1)},
        *({"action": "add-schema", "schema": schema} for schema in metadata.get("schemas", [])),
        {"action": "set-location", "location": metadata.get("location")},
    ]
    if metadata.get("properties"):
        updates.append({"action": "set-properties", "updates": metadata["properties"]})
    updates += [{"action": "add-view-version", "view-version": v} for v in metadata.get("versions", [])]
    updates.append({"action": "set-current-view-version", "view-version-id": metadata.get("current-version-id")})
    return updates


def operation(event: LoggedEvent) -> Json:
    """The draft's operation object; `update-table` carries exactly the committed updates and requirements."""
    recorded, data = event.recorded, event.recorded.data
    kind = OPERATIONS.get(current_type(recorded.type))  # a retired version is the same operation
    if kind is None:
        return _custom(event)
    body: Json = {"operation-type": kind}
    if kind.endswith("-namespace") or kind == "update-namespace-properties":
        body["namespace"] = event.namespace or []
        if kind == "create-namespace":
            body["properties"] = data.get("properties", {})
        elif kind == "update-namespace-properties":
            body |= {"updated": sorted(data.get("updated", {})), "removed": data.get("removed", []), "missing": []}
        return body
    uuid_key = "table-uuid" if kind.endswith("-table") else "view-uuid"
    entity_id = split_stream_id(recorded.stream_id)[1]
    if kind.startswith("rename-"):
        return body | {
            uuid_key: entity_id,
            "source": _identifier(event.source_namespace, event.source_name),
            "destination": _identifier(event.namespace, event.name),
        }
    body |= {"identifier": _identifier(event.namespace, event.name), uuid_key: entity_id}
    if kind in ("update-table", "update-view"):
        body |= {"updates": data.get("updates", []), "requirements": data.get("requirements", [])}
    elif kind == "create-table":
        body["updates"] = data.get("updates", [])
    elif kind == "create-view":
        body["updates"] = _view_creation_updates(data.get("metadata", {}))
    elif kind == "drop-table":
        body["purge"] = bool(data.get("purge_requested", False))
    elif kind in ("register-table", "register-view"):
        body["metadata-location"] = data.get("metadata_location")
    return body


def _custom(event: LoggedEvent) -> Json:
    """Management events (a warehouse renamed, its storage changed, ...): the type, and the object it is about."""
    body: Json = {"operation-type": CUSTOM, "custom-type": custom_type(event.recorded.type)}
    kind, object_id = split_stream_id(event.recorded.stream_id)
    body[f"{kind}-uuid"] = object_id
    return body


def iceberg_event(event: LoggedEvent) -> Json:
    """`request-id` groups the events of one request (a multi-table transaction: one id, N updates); without a
    request id (the CLI) the events of one commit form the group."""
    envelope = cloudevent(event.recorded)
    return {
        "event-id": envelope.get_id(),
        "request-id": envelope.get_extension("requestid") or str(event.recorded.commit_id),
        "request-event-count": event.commit_event_count,
        "timestamp-ms": millis(envelope.get_time() or event.recorded.time),
        "actor": actor(str(envelope.get_extension("actor"))),
        "operation": operation(event),
    }
