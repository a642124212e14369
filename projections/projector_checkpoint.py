"""Projector checkpoints: one row per projector, locked and advanced inside its read-model transaction."""

from __future__ import annotations

from datetime import datetime

import msgspec

from catalog_es.database import Connection
from catalog_es.migrations import Migration
from projections.relay_checkpoint import event_time, log_head

CHECKPOINT_MIGRATIONS = (
    Migration(
        "0501_projector_checkpoints",
        """
        CREATE TABLE IF NOT EXISTS projector_checkpoints (
            name text PRIMARY KEY,
            position bigint NOT NULL CHECK (position >= 0),
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
)


class ProjectorStatus(msgspec.Struct, frozen=True):
    """What `catalog-es projector status`, `/health` and `/metrics` report per projector."""

    projector: str
    mode: str
    checkpoint: int
    head: int
    lag_positions: int
    lag_seconds: float


async def lock_checkpoint(conn: Connection, name: str) -> int:
    """Inside a transaction: the checkpoint, row-locked until commit (one batch at a time per projector)."""
    await conn.execute(
        "INSERT INTO projector_checkpoints (name, position) VALUES (%s, 0) ON CONFLICT (name) DO NOTHING", (name,)
    )
    cursor = await conn.execute("SELECT position FROM projector_checkpoints WHERE name = %s FOR UPDATE", (name,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def move_checkpoint(conn: Connection, name: str, position: int) -> None:
    """Set the checkpoint (its row is locked by `lock_checkpoint` in the same transaction)."""
    await conn.execute(
        "UPDATE projector_checkpoints SET position = %s, updated_at = now() WHERE name = %s", (position, name)
    )


async def load_checkpoint(conn: Connection, name: str) -> int:
    cursor = await conn.execute("SELECT position FROM projector_checkpoints WHERE name = %s", (name,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def projector_status(conn: Connection, name: str, *, inline: bool, now: datetime) -> ProjectorStatus:
    """An inline projector is always at the head (it commits with the events)."""
    head = await log_head(conn)
    checkpoint = head if inline else await load_checkpoint(conn, name)
    oldest = await event_time(conn, checkpoint + 1) if head > checkpoint else None
    return ProjectorStatus(
        projector=name,
        mode="inline" if inline else "process",
        checkpoint=checkpoint,
        head=head,
        lag_positions=head - checkpoint,
        lag_seconds=max(0.0, (now - oldest).total_seconds()) if oldest else 0.0,
    )
