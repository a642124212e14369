"""The `maintenance_health` read model (a projector process): each live table's figures, folded from its commits."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import msgspec
from eventsourcing.persistence import Tracking
from psycopg.types.json import Jsonb

from catalog_es.clock import millis
from catalog_es.events import (
    Event,
    TableCommitted,
    TableCreated,
    TableDropped,
    TableRegistered,
    WarehouseDeleted,
)
from catalog_es.events.maintenance import MaintenanceJobFinished
from catalog_es.maintenance.health import TableHealth, fold_commit, fold_job_finished, new_health
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.logged_documents import LoggedDocuments
from catalog_es.store.migrations import Migration
from projections.checkpoints import insert_tracking, lock_checkpoint
from projections.follow import next_batch
from projections.topics import stored_type_names

HEALTH_PROJECTION = "maintenance_health"
HEALTH_TABLES = ("maintenance_health",)
HEALTH_MIGRATIONS = (
    Migration(
        "1002_maintenance_health",
        """
        CREATE TABLE IF NOT EXISTS maintenance_health (
            table_id uuid PRIMARY KEY,
            warehouse_id uuid NOT NULL,
            health jsonb NOT NULL
        );
        CREATE INDEX IF NOT EXISTS maintenance_health_warehouse ON maintenance_health (warehouse_id);
        """,
    ),
)

_FOLDED: tuple[type[Event], ...] = (TableCreated, TableRegistered, TableCommitted, TableDropped, MaintenanceJobFinished)
HEALTH_TOPICS: tuple[type[Event], ...] = (*_FOLDED, WarehouseDeleted)
_TYPES = stored_type_names(_FOLDED)
_TOPIC_TYPES = stored_type_names(HEALTH_TOPICS)  # what its catch-up selects from the store
# Commits record changes: the documents they produce, for the figures folded from them.
_DOCUMENTS = LoggedDocuments()
_WAREHOUSE_DELETED = WarehouseDeleted.type_name
_decode = msgspec.json.Decoder(TableHealth).decode
_DROPPED = object()  # a table the batch dropped


async def _load(conn: Connection, table_ids: list[uuid.UUID]) -> dict[uuid.UUID, TableHealth]:
    cursor = await conn.execute(
        "SELECT table_id, health::text FROM maintenance_health WHERE table_id = ANY(%s)", (table_ids,)
    )
    return {row[0]: _decode(row[1]) for row in await cursor.fetchall()}


async def _apply(conn: Connection, rows: dict[uuid.UUID, TableHealth | object], recorded: RecordedEvent) -> None:
    event, at = recorded.decode(), millis(recorded.time)
    if isinstance(event, TableCreated | TableRegistered):
        rows[event.table_id] = new_health(event.table_id, event.warehouse_id, event.metadata, at)
        return
    if isinstance(event, TableDropped):
        rows[event.table_id] = _DROPPED
        return
    current = rows.get(event.table_id) if isinstance(event, TableCommitted | MaintenanceJobFinished) else None
    if not isinstance(current, TableHealth):
        return  # a table this model never saw created (or a job on a dropped table)
    if isinstance(event, TableCommitted):
        fold_commit(current, event.updates, await _DOCUMENTS.after_commit(conn, event, recorded.position), at)
    elif isinstance(event, MaintenanceJobFinished):
        fold_job_finished(
            current,
            policy_type=event.policy_type,
            job_id=event.job_id,
            outcome=event.outcome,
            metrics=event.metrics,
            error=event.error,
            now_ms=at,
        )


async def project_health(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Load each table the batch touches once, fold its events in log order, write it once."""
    relevant = [recorded for recorded in events if recorded.type in _TYPES]
    deleted = {uuid.UUID(str(r.data["warehouse_id"])) for r in events if r.type == _WAREHOUSE_DELETED}
    for warehouse_id in deleted:  # a warehouse deleted with its tables (force) takes their figures along
        await conn.execute("DELETE FROM maintenance_health WHERE warehouse_id = %s", (warehouse_id,))
    if not relevant:
        return
    touched = list({uuid.UUID(str(recorded.data["table_id"])) for recorded in relevant})
    rows: dict[uuid.UUID, TableHealth | object] = dict(await _load(conn, touched))
    for recorded in relevant:
        await _apply(conn, rows, recorded)
    for table_id, health in rows.items():
        if isinstance(health, TableHealth) and health.warehouse_id not in deleted:
            await conn.execute(
                "INSERT INTO maintenance_health (table_id, warehouse_id, health) VALUES (%s, %s, %s)"
                " ON CONFLICT (table_id) DO UPDATE SET health = excluded.health",
                (table_id, health.warehouse_id, Jsonb(msgspec.to_builtins(health))),
            )
        else:
            await conn.execute("DELETE FROM maintenance_health WHERE table_id = %s", (table_id,))


async def catch_up_health(conn: Connection, *, batch_size: int = 500) -> int:
    """Bring the model to the log head now, as its projector would (same checkpoint, same lock): the scheduler
    decides on every commit made so far, whether or not a projector process runs. Returns the position."""
    while True:
        async with conn.transaction():
            checkpoint = await lock_checkpoint(conn, HEALTH_PROJECTION)
            batch = await next_batch(conn, checkpoint, batch_size, _TOPIC_TYPES)
            if batch.through == checkpoint:
                return checkpoint
            if batch.events:
                await project_health(conn, batch.events)
            await insert_tracking(conn, Tracking(HEALTH_PROJECTION, batch.through))
