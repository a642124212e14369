"""Reads of the maintenance models (`catalog_es.maintenance.ports.MaintenanceState`), with the object tree of the
permissions model (`authz_objects.ancestors`, nearest first) for inheritance and the task queue for queued jobs."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import Any, cast

import msgspec

from catalog_es.maintenance.health import TableHealth
from catalog_es.maintenance.jobs import MAINTENANCE_QUEUE, InheritedFrom, PolicyLevel
from catalog_es.maintenance.policy_types import PolicyType
from catalog_es.maintenance.ports import Declared
from catalog_es.store.database import Connection
from projections.maintenance.health import catch_up_health

_decode_health = msgspec.json.Decoder(TableHealth).decode
_SCHEDULER_LOCK = int.from_bytes(hashlib.blake2b(b"catalog-es maintenance scheduler", digest_size=8).digest()) >> 1

_IN_WAREHOUSE = "SELECT EXISTS (SELECT 1 FROM authz_objects WHERE id = %s AND kind = %s AND %s = ANY(ancestors))"
_DECLARED = (
    "SELECT o.id, p.object_kind, p.object_id, p.policy_type, p.content FROM authz_objects o"
    " JOIN maintenance_policies p ON p.object_id = ANY(o.ancestors)"
    " WHERE o.id = ANY(%s) ORDER BY o.id, array_position(o.ancestors, p.object_id), p.policy_type"
)
_CANDIDATES = (
    "SELECT h.health::text FROM maintenance_health h WHERE (%s::uuid IS NULL OR h.warehouse_id = %s)"
    " AND EXISTS (SELECT 1 FROM maintenance_policies p WHERE p.warehouse_id = h.warehouse_id) ORDER BY h.table_id"
)
_QUEUED = (
    "SELECT entity_id, payload->>'policy-type' FROM tasks WHERE queue = %s AND entity_id = ANY(%s)"
    " AND status IN ('scheduled', 'running')"
)


class MaintenanceReadModel:
    """The policies, health and queued maintenance jobs, over one connection per call."""

    async def object_in_warehouse(
        self, conn: Connection, kind: PolicyLevel, object_id: uuid.UUID, warehouse_id: uuid.UUID
    ) -> bool:
        cursor = await conn.execute(_IN_WAREHOUSE, (object_id, kind, warehouse_id))
        row = await cursor.fetchone()
        return bool(row and row[0])

    async def declared_policy(self, conn: Connection, object_id: uuid.UUID, policy_type: str) -> dict[str, Any] | None:
        cursor = await conn.execute(
            "SELECT content FROM maintenance_policies WHERE object_id = %s AND policy_type = %s",
            (object_id, policy_type),
        )
        row = await cursor.fetchone()
        return cast("dict[str, Any]", row[0]) if row else None

    async def declared_on(self, conn: Connection, object_id: uuid.UUID) -> dict[str, dict[str, Any]]:
        cursor = await conn.execute(
            "SELECT policy_type, content FROM maintenance_policies WHERE object_id = %s ORDER BY policy_type",
            (object_id,),
        )
        return {row[0]: row[1] for row in await cursor.fetchall()}

    async def declared_for_tables(
        self, conn: Connection, table_ids: Sequence[uuid.UUID]
    ) -> dict[uuid.UUID, list[Declared]]:
        cursor = await conn.execute(_DECLARED, (list(table_ids),))
        declared: dict[uuid.UUID, list[Declared]] = {table_id: [] for table_id in table_ids}
        for table_id, kind, object_id, policy_type, content in await cursor.fetchall():
            origin = InheritedFrom(type=kind, id=object_id)
            declared[table_id].append((origin, cast("PolicyType", policy_type), content))
        return declared

    async def health(self, conn: Connection, table_id: uuid.UUID) -> TableHealth | None:
        cursor = await conn.execute("SELECT health::text FROM maintenance_health WHERE table_id = %s", (table_id,))
        row = await cursor.fetchone()
        return _decode_health(row[0]) if row else None

    async def catch_up(self, conn: Connection) -> int:
        return await catch_up_health(conn)

    async def candidates(self, conn: Connection, warehouse_id: uuid.UUID | None) -> list[TableHealth]:
        cursor = await conn.execute(_CANDIDATES, (warehouse_id, warehouse_id))
        return [_decode_health(row[0]) for row in await cursor.fetchall()]

    async def lock_scheduling(self, conn: Connection) -> None:
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEDULER_LOCK,))

    async def queued_jobs(self, conn: Connection, table_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, set[str]]:
        cursor = await conn.execute(_QUEUED, (MAINTENANCE_QUEUE, list(table_ids)))
        queued: dict[uuid.UUID, set[str]] = {}
        for table_id, policy_type in await cursor.fetchall():
            queued.setdefault(table_id, set()).add(policy_type)
        return queued
