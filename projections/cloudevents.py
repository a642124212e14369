"""The one CloudEvents mapping: a recorded event as a CloudEvents 1.0 structured-mode document."""

from __future__ import annotations

from typing import Any

import msgspec

from catalog_es.store.eventstore import RecordedEvent

_encoder = msgspec.json.Encoder()


class StructuredCloudEvent(msgspec.Struct, frozen=True):
    """Required attributes have no defaults, so `specversion` can never be dropped by an encoder."""

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


def to_cloudevent(event: RecordedEvent) -> StructuredCloudEvent:
    """Extension attributes: `position` (global, gap-free) and `actor`; `requestid` when known."""
    return StructuredCloudEvent(
        specversion="1.0",
        id=str(event.id),
        source=event.source,
        type=event.type,
        subject=event.subject,
        time=event.time.isoformat().replace("+00:00", "Z"),
        datacontenttype=event.datacontenttype,
        data=event.data,
        position=event.position,
        actor=str(event.extensions.get("actor", "anonymous")),
        requestid=event.extensions.get("requestid"),
    )


def encode_structured(event: RecordedEvent) -> bytes:
    """One JSON document (the structured content mode's payload)."""
    document = msgspec.to_builtins(to_cloudevent(event))
    return _encoder.encode({key: value for key, value in document.items() if value is not None})
