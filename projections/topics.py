"""What a projection takes from the log: event classes, and every stored type name (retired ones too) they read as."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from catalog_es.events import Event
from catalog_es.events.upcasting import stored_types


def stored_type_names(topics: Iterable[type[Event]]) -> frozenset[str]:
    """Every type name in the log that decodes to one of `topics`."""
    return frozenset(stored for cls in topics for stored in stored_types(cls.type_name))


def dispatched(dispatcher: Callable[..., Any]) -> tuple[type[Event], ...]:
    """The event classes a `singledispatch` projector has a function for: its topics, declared once by registering.

    Only for a projector whose fallback does nothing; a registered base class stands for itself only.
    """
    registry: Any = getattr(dispatcher, "registry", None)
    if registry is None:
        raise TypeError(f"{dispatcher!r} is not a singledispatch function")
    return tuple(cls for cls in registry if isinstance(cls, type) and issubclass(cls, Event) and cls is not Event)
