"""The one CloudEvent model (the CloudEvents SDK's v1 event) and the wire forms derived from it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from cloudevents.core.v1.event import OPTIONAL_ATTRIBUTES, REQUIRED_ATTRIBUTES, CloudEvent

from catalog_es.store.eventstore import RecordedEvent

_encoder = msgspec.json.Encoder()
# Spec attributes first, then the data, then the extensions: the order every document we emit keeps.
_SPEC_ATTRIBUTES = frozenset(REQUIRED_ATTRIBUTES) | frozenset(OPTIONAL_ATTRIBUTES)


class StructuredCloudEvent(msgspec.Struct, frozen=True):
    """The typed structured-mode document the management API and `audit export` declare (a schema for OpenAPI
    and Parquet columns); built only from `cloudevent`. Required attributes have no defaults, so `specversion`
    can never be dropped by an encoder."""

    specversion: str
    id: str
    source: str
    type: str
    subject: str | None
    time: str
    datacontenttype: str
    data: dict[str, Any]
    position: int
    actor: str
    requestid: str | None = None


def cloudevent(event: RecordedEvent, *, omit_data: bool = False) -> CloudEvent:
    """The recorded event as a CloudEvent; the SDK checks the attributes (required ones, extension names).

    Extension attributes: `position` (global, gap-free) and `actor`; `requestid` when known. With
    `omit_data` (too large for the transport) the data and its content type go, `dataomitted` says so.
    """
    attributes: dict[str, Any] = {
        "specversion": "1.0",
        "id": str(event.id),
        "source": event.source,
        "type": event.type,
        "subject": event.subject,
        "time": event.time,
        "datacontenttype": None if omit_data else event.datacontenttype,
        "position": event.position,
        "actor": str(event.extensions.get("actor", "anonymous")),
        "requestid": event.extensions.get("requestid"),
        "importedfrom": event.extensions.get("importedfrom"),
        "releasedto": event.extensions.get("releasedto"),
    }
    attributes = {name: value for name, value in attributes.items() if value is not None}
    if omit_data:
        attributes["dataomitted"] = "true"
    return CloudEvent(attributes, None if omit_data else event.data)


def attribute_text(value: Any) -> Any:
    """An attribute as it travels: `time` in RFC 3339 with `Z` for UTC; integers stay integers in JSON."""
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    return value


def wire_attributes(event: CloudEvent) -> dict[str, Any]:
    """The attributes in their wire form and order (binary mode sends each as a `ce-` header)."""
    return {name: attribute_text(value) for name, value in event.get_attributes().items()}


def document(event: CloudEvent) -> dict[str, Any]:
    """The structured-mode JSON document: spec attributes, `data`, then the extensions."""
    attributes = wire_attributes(event)
    spec = {name: value for name, value in attributes.items() if name in _SPEC_ATTRIBUTES}
    if event.get_data() is not None:
        spec["data"] = event.get_data()
    return spec | {name: value for name, value in attributes.items() if name not in _SPEC_ATTRIBUTES}


def to_cloudevent(event: RecordedEvent) -> StructuredCloudEvent:
    """The typed document (absent optional attributes as null, as the management API has always sent them)."""
    return msgspec.convert({"subject": None} | document(cloudevent(event)), StructuredCloudEvent)


def encode_structured(event: RecordedEvent, *, omit_data: bool = False) -> bytes:
    """One JSON document (the structured content mode's payload)."""
    return _encoder.encode(document(cloudevent(event, omit_data=omit_data)))
