"""The `maintenance_policies` read model, projected inline: the policies each object declares."""

from __future__ import annotations

from collections.abc import Sequence

from psycopg.types.json import Jsonb

from catalog_es.events import Event, NamespaceDropped, TableDropped, WarehouseDeleted
from catalog_es.events.maintenance import PolicyRemoved, PolicySet
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.migrations import Migration

POLICY_TABLES = ("maintenance_policies",)
POLICY_MIGRATIONS = (
    Migration(
        "1001_maintenance_policies",
        """
        CREATE TABLE IF NOT EXISTS maintenance_policies (
            object_id uuid NOT NULL,
            policy_type text NOT NULL,
            object_kind text NOT NULL,
            warehouse_id uuid NOT NULL,
            content jsonb NOT NULL,
            PRIMARY KEY (object_id, policy_type)
        );
        CREATE INDEX IF NOT EXISTS maintenance_policies_warehouse ON maintenance_policies (warehouse_id);
        """,
    ),
)

POLICY_TOPICS: tuple[type[Event], ...] = (PolicySet, PolicyRemoved, TableDropped, NamespaceDropped, WarehouseDeleted)
_UPSERT = (
    "INSERT INTO maintenance_policies (object_id, policy_type, object_kind, warehouse_id, content)"
    " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (object_id, policy_type) DO UPDATE SET content = excluded.content"
)


async def project_policies(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Set, remove; a dropped object's policies go with it (its id never comes back)."""
    for recorded in events:
        event = recorded.decode()
        if isinstance(event, PolicySet):
            values = (event.object_id, event.policy_type, event.object_kind, event.warehouse_id, Jsonb(event.content))
            await conn.execute(_UPSERT, values)
        elif isinstance(event, PolicyRemoved):
            await conn.execute(
                "DELETE FROM maintenance_policies WHERE object_id = %s AND policy_type = %s",
                (event.object_id, event.policy_type),
            )
        elif isinstance(event, WarehouseDeleted):
            await conn.execute("DELETE FROM maintenance_policies WHERE warehouse_id = %s", (event.warehouse_id,))
        else:
            await conn.execute("DELETE FROM maintenance_policies WHERE object_id = %s", (event.entity_id,))
