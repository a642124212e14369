"""Every stored event type by its name: both families, and the decoding of a stored payload."""

from __future__ import annotations

import msgspec

from catalog_es.events.access import ACCESS_EVENTS
from catalog_es.events.base import Event, Json
from catalog_es.events.catalog import CATALOG_EVENTS

EVENT_TYPES: dict[str, type[Event]] = {cls.type_name: cls for cls in (*CATALOG_EVENTS, *ACCESS_EVENTS)}


def event_data(event: Event) -> Json:
    """The payload as JSON-ready builtins (ids as strings)."""
    data: Json = msgspec.to_builtins(event)
    return data


def decode_event(type_name: str, data: Json) -> Event:
    """Rebuild a typed event from its stored payload; unknown types are a bug, not data to skip."""
    try:
        cls = EVENT_TYPES[type_name]
    except KeyError:
        raise ValueError(f"Unknown event type {type_name!r}") from None
    return msgspec.convert(data, cls)
