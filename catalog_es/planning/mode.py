"""Which side plans a table's scans (`scan-planning-mode`, spec 1.11): the table's, warehouse's or server's word."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

ScanPlanningMode = Literal["client", "server"]
MODES: tuple[ScanPlanningMode, ...] = ("client", "server")
PLANNING_MODE_PROPERTY = "catalog-es.scan-planning-mode"  # a table's own mode, over its warehouse's


def warehouse_mode(server: ScanPlanningMode, warehouse: ScanPlanningMode | None) -> ScanPlanningMode:
    """The warehouse's own mode, else the server's setting."""
    return warehouse or server


def table_mode(inherited: ScanPlanningMode, properties: Mapping[str, Any]) -> ScanPlanningMode:
    """The table property `catalog-es.scan-planning-mode` when it says `client` or `server`, else `inherited`
    (the warehouse's mode). Any other value is ignored, as Iceberg ignores an unknown property value."""
    choice = str(properties.get(PLANNING_MODE_PROPERTY, "")).strip().lower()
    return "server" if choice == "server" else "client" if choice == "client" else inherited


class _Properties(msgspec.Struct, frozen=True):
    properties: dict[str, str] = {}


_PROPERTY_BYTES = PLANNING_MODE_PROPERTY.encode()
_DOCUMENT = msgspec.json.Decoder(_Properties)


def document_mode(inherited: ScanPlanningMode, document: bytes) -> ScanPlanningMode:
    """`table_mode` of a stored metadata document; one substring test on the load path for tables that do not
    name the property (nearly all), a decode of their properties only for those that do."""
    if _PROPERTY_BYTES not in document:
        return inherited
    return table_mode(inherited, _DOCUMENT.decode(document).properties)
