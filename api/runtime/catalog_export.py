"""`catalog-es export-catalog`: a portable manifest of a warehouse that `catalog-es import --manifest` reads.

Namespaces with their properties, tables and views by their current metadata files (and tables' locations),
and the grants held on each of them, named by path rather than by this catalog's ids, so another catalog can
adopt them. The manifest holds no secret: storage credentials stay with the warehouse.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from catalog_es.store.database import Connection
from catalog_es.tabular_kind import TABULAR_KINDS

MANIFEST_FORMAT = "catalog-es-manifest"
MANIFEST_VERSION = 1


async def _rows(conn: Connection, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    cursor = await conn.execute(query.encode(), params)
    return list(await cursor.fetchall())


async def export_manifest(conn: Connection, warehouse_id: uuid.UUID, source: str) -> dict[str, Any]:
    namespaces = await _rows(
        conn, "SELECT id, parts, properties FROM namespaces WHERE warehouse_id = %s ORDER BY key", (warehouse_id,)
    )
    paths: dict[uuid.UUID, dict[str, Any]] = {}
    document: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "source": source,
        "exported-at": datetime.now(UTC).isoformat(),
        "namespaces": [],
        "tables": [],
        "views": [],
        "grants": [],
    }
    for namespace_id, parts, properties in namespaces:
        document["namespaces"].append({"namespace": list(parts), "properties": dict(properties)})
        paths[namespace_id] = {"kind": "namespace", "namespace": list(parts)}
    for kind in TABULAR_KINDS:
        query = (
            f"SELECT t.id, n.parts, t.name, t.metadata_location, t.location FROM {kind.relation} t"
            " JOIN namespaces n ON n.id = t.namespace_id WHERE t.warehouse_id = %s ORDER BY n.key, t.name_key"
        )
        for tabular_id, parts, name, metadata_location, location in await _rows(conn, query, (warehouse_id,)):
            entry = {"namespace": list(parts), "name": name, "metadata-location": metadata_location}
            if kind.claims_location:  # a table's location is its own, claimed again on import
                entry["location"] = location
            document[kind.relation].append(entry)
            paths[tabular_id] = {"kind": kind.name, "namespace": list(parts), "name": name}
    paths[warehouse_id] = {"kind": "warehouse"}
    grants = await _rows(
        conn,
        "SELECT object_id, principal, privilege FROM authz_grants WHERE object_id = ANY(%s)"
        " ORDER BY object_id, principal, privilege",
        (list(paths),),
    )
    for object_id, principal, privilege in grants:
        document["grants"].append({**paths[object_id], "principal": principal, "privilege": privilege})
    return document
