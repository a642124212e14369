"""The catalog as of a log position, for engines: a replayed, cached index of names, serving the metadata from the log.

A snapshot keeps names and the position of each table's and view's latest metadata event, never the metadata
itself (read from the log on load), so its size grows with the number of objects, not with their metadata.
A later position starts from the nearest cached earlier snapshot and replays only the events in between.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from dataclasses import dataclass, field
from typing import Any

import msgspec
from cachetools import LRUCache

from catalog_es.errors import BadRequestError
from catalog_es.events import (
    Event,
    NamespaceCreated,
    NamespaceDropped,
    NamespacePropertiesUpdated,
    TableCommitted,
    TableCreated,
    TableDropped,
    TableRegistered,
    TableRenamed,
    ViewCommitted,
    ViewCreated,
    ViewDropped,
    ViewRegistered,
    ViewRenamed,
)
from catalog_es.events.base import parse_type_name, split_stream_id
from catalog_es.events.lifecycle import (
    NamespaceSoftDropped,
    NamespaceUndropped,
    TableRestored,
    TableSoftDropped,
    TableUndropped,
    ViewSoftDropped,
    ViewUndropped,
)
from catalog_es.events.registry import types_of
from catalog_es.identifiers import Namespace, name_key
from catalog_es.state import NamespaceRow, TabularKindName, TabularRow
from catalog_es.store.database import Connection
from catalog_es.store.logged_documents import document_at
from projections.catalog.queries import CatalogReadModel

_BATCH = 5000
# The events that name, place or re-point a namespace, table or view; their retired versions are replayed too.
_NAMING_EVENTS: tuple[type[Event], ...] = (
    NamespaceCreated,
    NamespacePropertiesUpdated,
    NamespaceDropped,
    NamespaceSoftDropped,
    NamespaceUndropped,
    TableCreated,
    TableRegistered,
    TableCommitted,
    TableRenamed,
    TableDropped,
    TableSoftDropped,
    TableUndropped,
    TableRestored,
    ViewCreated,
    ViewRegistered,
    ViewCommitted,
    ViewRenamed,
    ViewDropped,
    ViewSoftDropped,
    ViewUndropped,
)
_TYPES = [stored for cls in _NAMING_EVENTS for stored in types_of(cls.entity, cls.action)]
# Actions tables and views share, named by their event classes.
_PLACED = frozenset({TableCreated.action, TableRegistered.action, TableRenamed.action})
_REPOINTED = frozenset({TableCommitted.action, TableRestored.action})
_SOFT_DROPPED, _UNDROPPED, _DROPPED = TableSoftDropped.action, TableUndropped.action, TableDropped.action
# Only what naming and placing needs (never the metadata documents, nor a commit's updates).
_REPLAY = (
    "SELECT global_position, type, stream_id, data->>'warehouse_id', data->>'namespace_id', data->>'name',"
    " data->'namespace', data->'properties', data->'updated', data->'removed' FROM catalog_events"
    " WHERE global_position > %s AND global_position <= %s AND type = ANY(%s) ORDER BY global_position LIMIT %s"
)
_FIELDS = ("warehouse_id", "namespace_id", "name", "namespace", "properties", "updated", "removed")


@dataclass
class _Tabular:
    id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace_id: uuid.UUID
    name: str
    metadata_position: int


@dataclass
class Snapshot:
    """Namespaces by (warehouse, key); tables and views by (namespace id, name key)."""

    position: int
    namespaces: dict[tuple[uuid.UUID, str], NamespaceRow] = field(default_factory=dict)
    namespace_ids: dict[uuid.UUID, tuple[uuid.UUID, str]] = field(default_factory=dict)
    tabulars: dict[str, dict[tuple[uuid.UUID, str], _Tabular]] = field(
        default_factory=lambda: {"table": {}, "view": {}}
    )
    where: dict[uuid.UUID, tuple[uuid.UUID, str]] = field(default_factory=dict)  # tabular id -> its key
    hidden: dict[uuid.UUID, Any] = field(default_factory=dict)  # soft-dropped tabulars and namespaces, by id

    def apply(self, position: int, event_type: str, stream_id: str, data: dict[str, Any]) -> None:
        kind, action = parse_type_name(event_type) or ("", "")
        entity_id = uuid.UUID(split_stream_id(stream_id)[1])
        if kind == NamespaceCreated.entity:
            self._namespace(entity_id, action, data)
            return
        objects = self.tabulars[kind]
        if action == _SOFT_DROPPED and entity_id in self.where:
            self.hidden[entity_id] = objects.pop(self.where.pop(entity_id))
        elif action == _UNDROPPED and entity_id in self.hidden:
            tabular = self.hidden.pop(entity_id)
            tabular.name, tabular.namespace_id = data["name"], uuid.UUID(data["namespace_id"])
            self.where[entity_id] = key = (tabular.namespace_id, name_key(data["name"]))
            objects[key] = tabular
        elif action in _PLACED:
            old = self.where.pop(entity_id, None)
            previous = objects.pop(old, None) if old else None
            key = (uuid.UUID(data["namespace_id"]), name_key(data["name"]))
            moved = action == TableRenamed.action and previous is not None
            metadata_position = previous.metadata_position if moved and previous else position
            objects[key] = _Tabular(entity_id, uuid.UUID(data["warehouse_id"]), key[0], data["name"], metadata_position)
            self.where[entity_id] = key
        elif action in _REPOINTED and entity_id in self.where:
            # Replaced, never changed in place: a copy of this snapshot shares its entries.
            key = self.where[entity_id]
            objects[key] = dataclasses.replace(objects[key], metadata_position=position)
        elif action == _DROPPED and entity_id in self.where:
            objects.pop(self.where.pop(entity_id), None)

    def advanced_to(self, position: int) -> Snapshot:
        """A copy to replay further events into (the entries are shared: both only ever replace them)."""
        return Snapshot(
            position,
            dict(self.namespaces),
            dict(self.namespace_ids),
            {kind: dict(objects) for kind, objects in self.tabulars.items()},
            dict(self.where),
        )

    def _namespace(self, namespace_id: uuid.UUID, action: str, data: dict[str, Any]) -> None:
        if action == NamespaceCreated.action:
            row = NamespaceRow(
                namespace_id, uuid.UUID(data["warehouse_id"]), list(data["namespace"]), dict(data["properties"]), 1
            )
            key = (row.warehouse_id, row.namespace.key)
            self.namespaces[key] = row
            self.namespace_ids[namespace_id] = key
        elif action == NamespacePropertiesUpdated.action and namespace_id in self.namespace_ids:
            key = self.namespace_ids[namespace_id]
            row = self.namespaces[key]
            properties = {k: v for k, v in row.properties.items() if k not in data["removed"]} | data["updated"]
            self.namespaces[key] = NamespaceRow(row.id, row.warehouse_id, row.parts, properties, row.version + 1)
        elif action == NamespaceDropped.action and namespace_id in self.namespace_ids:
            self.namespaces.pop(self.namespace_ids.pop(namespace_id), None)
        elif action == NamespaceSoftDropped.action and namespace_id in self.namespace_ids:
            self.hidden[namespace_id] = self.namespaces.pop(self.namespace_ids.pop(namespace_id))
        elif action == NamespaceUndropped.action and namespace_id in self.hidden:
            row = self.hidden.pop(namespace_id)
            self.namespaces[(row.warehouse_id, row.namespace.key)] = row
            self.namespace_ids[namespace_id] = (row.warehouse_id, row.namespace.key)


class FuturePositionError(BadRequestError):
    """An as-of position past the log's end would change as the log grows."""


async def replay(conn: Connection, position: int, base: Snapshot | None = None) -> Snapshot:
    """Names and placements after every event up to `position`, read in batches without the metadata; from `base`
    (a snapshot at an earlier position, left unchanged) only the events after it.

    Raises: FuturePositionError when the log has not reached `position` yet.
    """
    cursor = await conn.execute("SELECT position FROM catalog_event_counter")
    head = await cursor.fetchone()
    if head is None or position > int(head[0]):
        raise FuturePositionError(f"The log has not reached position {position} yet")
    if base is not None and base.position > position:
        raise ValueError(f"A snapshot at {base.position} cannot be replayed back to {position}")
    snapshot = base.advanced_to(position) if base is not None else Snapshot(position)
    after = base.position if base is not None else 0
    while True:
        cursor = await conn.execute(_REPLAY, (after, position, _TYPES, _BATCH))
        rows = await cursor.fetchall()
        for global_position, event_type, stream_id, *fields in rows:
            data = {key: value for key, value in zip(_FIELDS, fields, strict=True) if value is not None}
            snapshot.apply(int(global_position), str(event_type), str(stream_id), data)
        if len(rows) < _BATCH:
            return snapshot
        after = int(rows[-1][0])


class AsOfCache:
    """The most recently used snapshots, at most `size` of them (each replayed once, concurrent askers wait).

    A new position is replayed from the latest cached snapshot before it, so stepping forward through the past
    (N, then N+k) reads only the k events in between."""

    def __init__(self, size: int) -> None:
        self._snapshots: LRUCache[int, Snapshot] = LRUCache(size)
        self._lock = asyncio.Lock()

    async def get(self, conn: Connection, position: int) -> Snapshot:
        async with self._lock:
            found = self._snapshots.get(position)
            if found is not None:
                return found
            earlier = [cached for cached in self._snapshots if cached < position]
            base = self._snapshots[max(earlier)] if earlier else None
            snapshot = await replay(conn, position, base)
            self._snapshots[position] = snapshot
            return snapshot


class AsOfReadModel(CatalogReadModel):
    """The catalog read model's reads, answered as of one position; warehouses (and writes) stay current."""

    def __init__(self, cache: AsOfCache, position: int) -> None:
        self._cache, self.position = cache, position

    async def _snapshot(self, conn: Connection) -> Snapshot:
        return await self._cache.get(conn, self.position)

    async def namespace(self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace) -> NamespaceRow | None:
        return (await self._snapshot(conn)).namespaces.get((warehouse_id, namespace.key))

    async def _tabular(
        self, conn: Connection, kind: str, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> tuple[NamespaceRow, _Tabular, str, str] | None:
        snapshot = await self._snapshot(conn)
        parent = snapshot.namespaces.get((warehouse_id, namespace.key))
        found = parent and snapshot.tabulars[kind].get((parent.id, name_key(name)))
        if parent is None or not found:
            return None
        location, document = await document_at(conn, f"{kind}-{found.id}", found.metadata_position)
        return parent, found, location, document

    async def table_document(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> tuple[str, bytes] | None:
        found = await self._tabular(conn, "table", warehouse_id, namespace, name)
        return (found[2], found[3].encode()) if found else None

    async def table(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        found = await self._tabular(conn, "table", warehouse_id, namespace, name)
        if found is None:
            return None
        parent, tabular, location, document = found
        return _row(parent, tabular, location, document, "table")

    async def view(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        found = await self._tabular(conn, "view", warehouse_id, namespace, name)
        if found is None:
            return None
        parent, tabular, location, document = found
        return _row(parent, tabular, location, document, "view")

    async def list_namespaces(
        self, conn: Connection, warehouse_id: uuid.UUID, parent: Namespace | None, after: str, limit: int | None
    ) -> list[list[str]]:
        depth = len(parent.parts) + 1 if parent else 1
        prefix = parent.key if parent else ""
        rows = sorted(
            (key, row)
            for (warehouse, key), row in (await self._snapshot(conn)).namespaces.items()
            if warehouse == warehouse_id
            and len(row.parts) == depth
            and (parent is None or Namespace(tuple(row.parts[:-1])).key == prefix)
            and key > after
        )
        return [row.parts for _, row in rows[:limit]]

    async def list_tables(self, conn: Connection, namespace_id: uuid.UUID, after: str, limit: int | None) -> list[str]:
        return await self._names(conn, "table", namespace_id, after, limit)

    async def list_views(self, conn: Connection, namespace_id: uuid.UUID, after: str, limit: int | None) -> list[str]:
        return await self._names(conn, "view", namespace_id, after, limit)

    async def _names(
        self, conn: Connection, kind: str, namespace_id: uuid.UUID, after: str, limit: int | None
    ) -> list[str]:
        objects = (await self._snapshot(conn)).tabulars[kind]
        keys = sorted(key for namespace, key in objects if namespace == namespace_id and key > after)
        return [objects[(namespace_id, key)].name for key in keys[:limit]]


def _row(parent: NamespaceRow, tabular: _Tabular, location: str, document: str, kind: TabularKindName) -> TabularRow:
    metadata = msgspec.json.decode(document)
    return TabularRow(
        id=tabular.id,
        warehouse_id=tabular.warehouse_id,
        namespace_id=parent.id,
        namespace=parent.parts,
        name=tabular.name,
        location=metadata.get("location", ""),
        metadata_location=location,
        metadata=metadata,
        version=0,
        kind=kind,
    )
