"""Old event versions read as the current ones: one pure function per retired type name, applied on every read.

The log is never rewritten (the hash chain proves it), so a stored `...v1` stays `...v1`; readers see its upcast.
"""

from __future__ import annotations

from collections.abc import Callable

from catalog_es.events.base import Json

Upcaster = Callable[[Json], Json]


def table_committed_v1_to_v2(data: Json) -> Json:
    """v1 recorded the whole resulting document on every commit; v2 records it only deliberately, which this is.

    The document's `last-updated-ms` stands for the clock it was applied at; it has no digest (nothing to replay).
    """
    metadata = data["metadata"]
    return {**data, "applied_at_ms": int(metadata.get("last-updated-ms", 0))}


def view_committed_v1_to_v2(data: Json) -> Json:
    """v1 recorded the whole resulting view document on every replace; it is taken as recorded (no clock to reuse)."""
    return {**data, "applied_at_ms": 0}


# retired type name -> (the next version's type name, its upcaster); chains are followed to the current version
UPCASTS: dict[str, tuple[str, Upcaster]] = {
    "io.catalog-es.table.committed.v1": ("io.catalog-es.table.committed.v2", table_committed_v1_to_v2),
    "io.catalog-es.view.committed.v1": ("io.catalog-es.view.committed.v2", view_committed_v1_to_v2),
}


def upcast(type_name: str, data: Json) -> tuple[str, Json]:
    """The current type name and payload of a stored event of any version."""
    while type_name in UPCASTS:
        type_name, step = UPCASTS[type_name]
        data = step(data)
    return type_name, data


def current_type(type_name: str) -> str:
    """The current type name a stored type name reads as (itself when it is current or unknown)."""
    while type_name in UPCASTS:
        type_name = UPCASTS[type_name][0]
    return type_name


def stored_types(type_name: str) -> list[str]:
    """Every stored name that reads as `type_name`: itself and the versions it retired (for SQL filters)."""
    return [type_name, *(old for old in UPCASTS if current_type(old) == type_name)]
