"""Lakekeeper-compatible change events: type names, extension attributes, `data`, names as of a position."""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from catalog_es.events import (
    NamespaceCreated,
    TableCommitted,
    TableCreated,
    TableDropped,
    TableRegistered,
    TableRenamed,
    ViewCommitted,
    ViewCreated,
    ViewDropped,
    ViewRenamed,
)
from catalog_es.events.lifecycle import TableSoftDropped, TableUndropped, ViewSoftDropped, ViewUndropped
from catalog_es.events.registry import types_of
from catalog_es.events.upcasting import UPCASTS, current_type
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from projections.relay.binding import (
    CONTENT_TYPE_HEADER,
    MSG_ID_HEADER,
    STRUCTURED_CONTENT_TYPE,
    NatsMessage,
    entity_and_action,
)

# Our stable type names → Lakekeeper's (it has no event for registering a view).
LAKEKEEPER_TYPES = {
    TableCreated.type_name: "createTable",
    TableRegistered.type_name: "registerTable",
    TableCommitted.type_name: "updateTable",
    TableRenamed.type_name: "renameTable",
    TableDropped.type_name: "dropTable",
    ViewCreated.type_name: "createView",
    ViewCommitted.type_name: "updateView",
    ViewRenamed.type_name: "renameView",
    ViewDropped.type_name: "dropView",
    # Soft deletion: Lakekeeper publishes its soft drops as drops, and one `undropTabulars` per restored tabular.
    TableSoftDropped.type_name: "dropTable",
    ViewSoftDropped.type_name: "dropView",
    TableUndropped.type_name: "undropTabulars",
    ViewUndropped.type_name: "undropTabulars",
}
LAKEKEEPER_TYPES |= {  # a retired version still in the log is published as its current one is
    old: LAKEKEEPER_TYPES[current] for old in UPCASTS if (current := current_type(old)) in LAKEKEEPER_TYPES
}
# Fixed namespace: the compatible event's id is derived from the catalog event's, so a re-publish dedups.
_ID_NAMESPACE = uuid.UUID("5a0c6c36-4a55-4a35-9a34-8c43a7a9a1c1")
_encoder = msgspec.json.Encoder()


class TabularName(msgspec.Struct, frozen=True):
    namespace: list[str]
    name: str

    @property
    def identifier(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "name": self.name}


def lakekeeper_id(event_id: uuid.UUID) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, str(event_id)))


def _actor(actor: str) -> str:
    """Lakekeeper's actor extension is a JSON string."""
    if actor == "anonymous":
        return '{"type":"anonymous"}'
    return _encoder.encode({"type": "principal", "principal": actor}).decode()


def _by_id(items: list[dict[str, Any]], key: str, wanted: Any) -> dict[str, Any] | None:
    return next((item for item in items if item.get(key) == wanted), None)


def tabular_id(event: RecordedEvent) -> str:
    """The table's or view's id (`table_id` / `view_id` in the payload)."""
    kind, _ = entity_and_action(event.type)
    return str(event.data[f"{kind}_id"])


def _create_table_request(name: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The CreateTableRequest Lakekeeper sends, rebuilt from the table's first metadata."""
    return {
        "name": name,
        "location": metadata.get("location"),
        "schema": _by_id(metadata.get("schemas", []), "schema-id", metadata.get("current-schema-id")),
        "partition-spec": _by_id(metadata.get("partition-specs", []), "spec-id", metadata.get("default-spec-id")),
        "write-order": _by_id(metadata.get("sort-orders", []), "order-id", metadata.get("default-sort-order-id")),
        "stage-create": False,
        "properties": metadata.get("properties", {}),
    }


def _create_view_request(name: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The CreateViewRequest Lakekeeper sends, rebuilt from the view's first metadata."""
    version = _by_id(metadata.get("versions", []), "version-id", metadata.get("current-version-id")) or {}
    return {
        "name": name,
        "location": metadata.get("location"),
        "schema": _by_id(metadata.get("schemas", []), "schema-id", version.get("schema-id")),
        "view-version": version,
        "properties": metadata.get("properties", {}),
    }


def _data(event: RecordedEvent, name: TabularName, previous: TabularName | None) -> Any:
    data, kind = event.data, LAKEKEEPER_TYPES[event.type]
    if kind == "createTable":
        return _create_table_request(name.name, data["metadata"])
    if kind == "createView":
        return _create_view_request(name.name, data["metadata"])
    if kind in ("updateTable", "updateView"):
        return {"identifier": name.identifier, "requirements": data["requirements"], "updates": data["updates"]}
    if kind in ("renameTable", "renameView") and previous is not None:
        return {"source": previous.identifier, "destination": name.identifier}
    if kind == "undropTabulars":
        return {"id": tabular_id(event), "type": entity_and_action(event.type)[0], "identifier": name.identifier}
    return None


def lakekeeper_message(
    event: RecordedEvent,
    *,
    subject: str,
    name: TabularName,
    previous: TabularName | None = None,
    omit_data: bool = False,
) -> NatsMessage:
    """Structured mode, as Lakekeeper publishes: `name`/`namespace` are the tabular's after the event,
    `previous` its name before a rename. The `position` extension is ours (ordering, resume); so is
    `dataomitted`, set when the data had to be left out to fit the server's max_payload."""
    event_id = lakekeeper_id(event.id)
    document = {
        "specversion": "1.0",
        "id": event_id,
        "source": event.source,
        "type": LAKEKEEPER_TYPES[event.type],
        "time": event.time.isoformat().replace("+00:00", "Z"),
        "datacontenttype": "application/json",
        "data": None if omit_data else _data(event, name, previous),
        "tabular-type": entity_and_action(event.type)[0],
        "tabular-id": tabular_id(event),
        "warehouse-id": str(event.data["warehouse_id"]),
        "prefix": str(event.data["warehouse_id"]),
        "name": name.name,
        "namespace": ".".join(name.namespace),
        "actor": _actor(str(event.extensions.get("actor", "anonymous"))),
        "trace-id": str(event.extensions.get("requestid") or event.commit_id),
        "position": event.position,
    }
    if omit_data:
        document["dataomitted"] = "true"
    headers = {CONTENT_TYPE_HEADER: STRUCTURED_CONTENT_TYPE, MSG_ID_HEADER: event_id}
    return NatsMessage(subject, headers, _encoder.encode(document), event_id, event.position)


_KINDS = ("table", "view")
_NAMING_TYPES = [name for kind in _KINDS for name in types_of(kind, "created", "registered", "renamed", "undropped")]
_DROPPED_TYPES = {name for kind in _KINDS for name in types_of(kind, "dropped")}
_LAST_NAMING_EVENT = (
    "SELECT data FROM catalog_events WHERE stream_id = %s AND type = ANY(%s) AND global_position < %s"
    " ORDER BY global_position DESC LIMIT 1"
)


class TabularNames:
    """Names as of the event being relayed. The relay shows it every event in log order (`observe`);
    a cache miss (a restart, an old table) reads the log before that position."""

    def __init__(self) -> None:
        self._tabulars: dict[str, tuple[str, str]] = {}  # stream id → (namespace id, name)
        self._namespaces: dict[str, list[str]] = {}

    async def tabular(self, conn: Connection, stream_id: str, *, before: int) -> TabularName | None:
        """The name of the table or view `stream_id` (e.g. `table-<id>`) just before position `before`."""
        if stream_id not in self._tabulars:
            cursor = await conn.execute(_LAST_NAMING_EVENT, (stream_id, _NAMING_TYPES, before))
            row = await cursor.fetchone()
            if row is None:
                return None
            self._tabulars[stream_id] = (str(row[0]["namespace_id"]), str(row[0]["name"]))
        namespace_id, name = self._tabulars[stream_id]
        return await self.named(conn, namespace_id, name, before=before)

    async def named(self, conn: Connection, namespace_id: str, name: str, *, before: int) -> TabularName | None:
        if namespace_id not in self._namespaces:
            cursor = await conn.execute(
                _LAST_NAMING_EVENT, (f"namespace-{namespace_id}", [NamespaceCreated.type_name], before)
            )
            row = await cursor.fetchone()
            if row is None:
                return None
            self._namespaces[namespace_id] = list(row[0]["namespace"])
        return TabularName(namespace=self._namespaces[namespace_id], name=name)

    def observe(self, event: RecordedEvent) -> None:
        """Move the cache past `event` (namespaces are never renamed; dropped tabulars are forgotten)."""
        data = event.data
        if event.type == NamespaceCreated.type_name:
            self._namespaces[str(data["namespace_id"])] = list(data["namespace"])
        elif event.type in _NAMING_TYPES:
            self._tabulars[event.stream_id] = (str(data["namespace_id"]), str(data["name"]))
        elif event.type in _DROPPED_TYPES:
            self._tabulars.pop(event.stream_id, None)
