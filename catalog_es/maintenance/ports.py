"""What the maintenance commands read before deciding: objects, declared policies, health and queued jobs."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from catalog_es.maintenance.health import TableHealth
from catalog_es.maintenance.jobs import InheritedFrom, PolicyLevel
from catalog_es.maintenance.policy_types import PolicyType
from catalog_es.store.database import Connection

Declared = tuple[InheritedFrom, PolicyType, dict[str, Any]]
"""A policy declared on a table or one of its ancestors: where, which type, its stored content."""


class MaintenanceState(Protocol):
    async def object_in_warehouse(
        self, conn: Connection, kind: PolicyLevel, object_id: uuid.UUID, warehouse_id: uuid.UUID
    ) -> bool:
        """Whether a live object of that kind exists in (or, for a warehouse, is) the warehouse."""
        ...

    async def declared_policy(
        self, conn: Connection, object_id: uuid.UUID, policy_type: str
    ) -> dict[str, Any] | None: ...

    async def declared_for_tables(
        self, conn: Connection, table_ids: Sequence[uuid.UUID]
    ) -> dict[uuid.UUID, list[Declared]]:
        """Per table, the policies on it and its ancestors, nearest object first."""
        ...

    async def catch_up(self, conn: Connection) -> int:
        """Bring the health figures to the log head; returns the position they are at."""
        ...

    async def candidates(self, conn: Connection, warehouse_id: uuid.UUID | None) -> list[TableHealth]:
        """Health of the live tables in warehouses that declare any policy (all warehouses when None)."""
        ...

    async def lock_scheduling(self, conn: Connection) -> None:
        """Inside a transaction: one scheduler at a time decides what is already queued."""
        ...

    async def queued_jobs(self, conn: Connection, table_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, set[str]]:
        """Per table, the policy types of its maintenance jobs still scheduled or running."""
        ...
