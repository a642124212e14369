"""The CloudEvents NATS binding: a recorded event as a JetStream message (subject, headers, payload)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import unquote

import msgspec
from cloudevents.core.v1.event import CloudEvent

from catalog_es.events.base import parse_type_name, split_stream_id
from catalog_es.store.eventstore import RecordedEvent
from projections.cloudevents import cloudevent, document, wire_attributes
from projections.relay.config import ContentMode

MSG_ID_HEADER = "Nats-Msg-Id"
CONTENT_TYPE_HEADER = "Content-Type"
STRUCTURED_CONTENT_TYPE = "application/cloudevents+json"
# Binding spec (nats-protocol-binding, binary mode): percent-encode space, '"', '%' and anything
# outside printable ASCII; everything else travels as is.
_HEADER_UNSAFE = re.compile(r'[^\x21-\x7e]|["%]')
_SUBJECT_UNSAFE = re.compile(r"[.*>\s]")
_encoder = msgspec.json.Encoder()


class NatsMessage(msgspec.Struct, frozen=True):
    """One message to publish; `msg_id` is also its `Nats-Msg-Id` header (broker-side dedup)."""

    subject: str
    headers: dict[str, str]
    payload: bytes
    msg_id: str
    position: int

    @property
    def size(self) -> int:
        """Bytes counted against the server's max_payload (headers travel in the same frame)."""
        header_bytes = sum(len(name) + len(value) + 4 for name, value in self.headers.items())
        return len(self.payload) + header_bytes + 12


def _token(value: str) -> str:
    if _SUBJECT_UNSAFE.search(value):
        value = _SUBJECT_UNSAFE.sub("_", value)
    return value or "_"


def _percent_encode(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group().encode())


def entity_and_action(event_type: str) -> tuple[str, str]:
    """`io.catalog-es.table.committed.v1` → (`table`, `committed`); other shapes keep their text."""
    parsed = parse_type_name(event_type)
    return parsed if parsed is not None else ("_", event_type)


def subject_for(prefix: str, event: RecordedEvent) -> str:
    """`<prefix>.<warehouse-id or _>.<entity>.<action>.<entity-id>`, e.g. `catalog.<wh>.table.committed.<table-id>`."""
    entity, action = entity_and_action(event.type)
    warehouse = str(event.data.get("warehouse_id") or "_")
    entity_id = split_stream_id(event.stream_id)[1]
    return f"{prefix}.{_token(warehouse)}.{_token(entity)}.{_token(action)}.{_token(entity_id)}"


def encode_header_value(value: str) -> str:
    """The binding's canonical string form; plain values (ids, types, times) pass unchanged."""
    if _HEADER_UNSAFE.search(value) is None:
        return value
    return _HEADER_UNSAFE.sub(_percent_encode, value)


def decode_header_value(value: str) -> str:
    return unquote(value)


def _binary(event: RecordedEvent, subject: str, *, omit_data: bool) -> NatsMessage:
    ce = cloudevent(event, omit_data=omit_data)
    headers = {f"ce-{name}": encode_header_value(str(value)) for name, value in wire_attributes(ce).items()}
    headers[MSG_ID_HEADER] = ce.get_id()
    data = ce.get_data()
    payload = b"" if data is None else _encoder.encode(data)
    return NatsMessage(subject, headers, payload, ce.get_id(), event.position)


def _structured(event: RecordedEvent, subject: str, *, omit_data: bool) -> NatsMessage:
    ce = cloudevent(event, omit_data=omit_data)
    headers = {CONTENT_TYPE_HEADER: STRUCTURED_CONTENT_TYPE, MSG_ID_HEADER: ce.get_id()}
    return NatsMessage(subject, headers, _encoder.encode(document(ce)), ce.get_id(), event.position)


def to_message(event: RecordedEvent, *, prefix: str, mode: ContentMode, omit_data: bool = False) -> NatsMessage:
    """The event in binary mode (`ce-*` headers, the JSON data as payload) or structured mode.

    With `omit_data` (an event too large for the server's max_payload) the data is left out and the
    extension attribute `dataomitted` says so; the envelope, and so the event's place, still arrives.
    """
    build = _binary if mode == "binary" else _structured
    return build(event, subject_for(prefix, event), omit_data=omit_data)


def message_position(headers: dict[str, str] | None, payload: bytes | None) -> int | None:
    """The log position a relayed message carries: its `ce-position` header, or the structured payload's."""
    headers = {name.lower(): value for name, value in (headers or {}).items()}
    if "ce-position" in headers:
        return int(headers["ce-position"])
    if headers.get(CONTENT_TYPE_HEADER.lower(), "").startswith("application/cloudevents") and payload:
        position = msgspec.json.decode(payload).get("position")
        return int(position) if position is not None else None
    return None


def to_document(headers: dict[str, str] | None, payload: bytes) -> dict[str, Any]:
    """A received message (either mode) as the structured-mode JSON document, for people and tools.

    Binary mode goes through the CloudEvent model (the SDK checks the attributes). A structured payload
    is already the document and is passed on as sent: the Lakekeeper-compatible messages carry a
    `trace-id` extension the SDK's v1 event refuses (extension names are lowercase letters and digits).
    """
    headers = headers or {}
    content_type = next((value for name, value in headers.items() if name.lower() == "content-type"), "")
    if content_type.startswith("application/cloudevents"):
        structured: dict[str, Any] = msgspec.json.decode(payload)
        return structured
    attributes: dict[str, Any] = {
        name.lower().removeprefix("ce-"): decode_header_value(value)
        for name, value in headers.items()
        if name.lower().startswith("ce-")
    }
    if "position" in attributes:
        attributes["position"] = int(attributes["position"])
    if "time" in attributes:
        attributes["time"] = datetime.fromisoformat(attributes["time"])
    received = CloudEvent(attributes, msgspec.json.decode(payload) if payload else None)
    # Header order, then the data: how `events tail` has always printed a binary-mode message.
    text = wire_attributes(received)
    return text | {"data": received.get_data()} if payload else text
