"""Every stored event type by its name: all families, and the decoding of a stored payload."""

from __future__ import annotations

import msgspec

from catalog_es.events.access import ACCESS_EVENTS
from catalog_es.events.base import Event, Json
from catalog_es.events.catalog import CATALOG_EVENTS
from catalog_es.events.lifecycle import LIFECYCLE_EVENTS
from catalog_es.events.maintenance import MAINTENANCE_EVENTS
from catalog_es.events.protection import PROTECTION_EVENTS
from catalog_es.events.tasks import TASK_EVENTS
from catalog_es.events.upcasting import UPCASTS, current_type, upcast

_FAMILIES = (CATALOG_EVENTS, ACCESS_EVENTS, TASK_EVENTS, MAINTENANCE_EVENTS, PROTECTION_EVENTS, LIFECYCLE_EVENTS)
EVENT_TYPES: dict[str, type[Event]] = {cls.type_name: cls for family in _FAMILIES for cls in family}
# Retired versions still in the log read as the current class (after `upcast`); listed after the current names.
EVENT_TYPES |= {old: EVENT_TYPES[current_type(old)] for old in UPCASTS}


def event_data(event: Event) -> Json:
    """The payload as JSON-ready builtins (ids as strings)."""
    data: Json = msgspec.to_builtins(event)
    return data


def decode_event(type_name: str, data: Json) -> Event:
    """Rebuild a typed event from its stored payload, of any version (upcast to the current one); unknown types are a
    bug, not data to skip."""
    type_name, data = upcast(type_name, data)
    try:
        cls = EVENT_TYPES[type_name]
    except KeyError:
        raise ValueError(f"Unknown event type {type_name!r}") from None
    return msgspec.convert(data, cls)


def short_type(type_name: str) -> str:
    """`io.catalog-es.table.committed.v1` -> `table.committed`, for people; an unknown name stays as it is."""
    cls = EVENT_TYPES.get(type_name)
    return f"{cls.entity}.{cls.action}" if cls is not None else type_name


def full_type(name: str) -> str | None:
    """A stored type name from its full or short form (`table.committed`); None when no event type has it."""
    if name in EVENT_TYPES:
        return name
    return next((type_name for type_name, cls in EVENT_TYPES.items() if f"{cls.entity}.{cls.action}" == name), None)


def types_of(entity: str, *actions: str) -> list[str]:
    """The stored type names of an entity's events with these actions (all of them when none), in registry order."""
    return [
        type_name
        for type_name, cls in EVENT_TYPES.items()
        if cls.entity == entity and (not actions or cls.action in actions)
    ]
