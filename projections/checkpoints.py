"""Both checkpoint tables, the relay's leadership lock, and the one lag computation every status report uses.

A checkpoint is eventsourcing's `Tracking` (application name, notification id = log position), recorded
in the same transaction as the view it describes, forward only, as its `TrackingRecorder` does. The
recorder itself is not used: `PostgresTrackingRecorder` runs on its own synchronous psycopg pool, and the
runner and the relay are async on ours; these functions are its interface over our connection.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

import msgspec
from eventsourcing.persistence import IntegrityError, Tracking

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import event_time, log_head
from catalog_es.store.migrations import Migration

RELAY_MIGRATIONS = (
    Migration(
        "0201_relay_checkpoint",
        """
        CREATE TABLE IF NOT EXISTS relay_checkpoints (
            name text PRIMARY KEY,
            position bigint NOT NULL CHECK (position >= 0),
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
)


class RelayStatus(msgspec.Struct, frozen=True):
    """What `catalog-es relay --status` prints."""

    relay: str
    checkpoint: int
    head: int
    lag_positions: int
    lag_seconds: float
    leader_pid: int | None
    leader_application: str | None


def lock_key(relay: str) -> int:
    """A stable 63-bit advisory-lock key per relay name (one leader per stream and database)."""
    digest = hashlib.blake2b(f"catalog-es relay:{relay}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


async def try_lead(conn: Connection, relay: str) -> bool:
    """Take the session-level leadership lock if it is free; held until this connection closes."""
    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(relay),))
    row = await cursor.fetchone()
    return bool(row and row[0])


async def load_relay_checkpoint(conn: Connection, relay: str) -> int:
    cursor = await conn.execute("SELECT position FROM relay_checkpoints WHERE name = %s", (relay,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def advance_checkpoint(conn: Connection, tracking: Tracking) -> None:
    """After the acks, forward only: a late writer (a former leader) can never move the checkpoint back."""
    await conn.execute(
        "INSERT INTO relay_checkpoints (name, position) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE"
        " SET position = greatest(relay_checkpoints.position, excluded.position), updated_at = now()",
        (tracking.application_name, tracking.notification_id),
    )


class Lag(msgspec.Struct, frozen=True):
    """How far a follower is behind the log: positions, and seconds since its oldest unapplied event."""

    checkpoint: int
    head: int
    positions: int
    seconds: float


async def lag(conn: Connection, checkpoint: int, now: datetime) -> Lag:
    """The one place that measures lag (relay status, projector status, /health, /metrics)."""
    head = await log_head(conn)
    oldest = await event_time(conn, checkpoint + 1) if head > checkpoint else None
    seconds = max(0.0, (now - oldest).total_seconds()) if oldest else 0.0
    return Lag(checkpoint=checkpoint, head=head, positions=head - checkpoint, seconds=seconds)


async def relay_status(conn: Connection, relay: str, now: datetime) -> RelayStatus:
    """Checkpoint, log head, lag (positions; seconds since the oldest unpublished event) and the leader."""
    behind = await lag(conn, await load_relay_checkpoint(conn, relay), now)
    key = lock_key(relay)
    cursor = await conn.execute(
        "SELECT l.pid, a.application_name FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
        " AND l.classid::bigint = %s AND l.objid::bigint = %s"
        " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        (key >> 32, key & 0xFFFFFFFF),
    )
    leader = await cursor.fetchone()
    return RelayStatus(
        relay=relay,
        checkpoint=behind.checkpoint,
        head=behind.head,
        lag_positions=behind.positions,
        lag_seconds=behind.seconds,
        leader_pid=int(leader[0]) if leader else None,
        leader_application=leader[1] if leader else None,
    )


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


async def insert_tracking(conn: Connection, tracking: Tracking) -> None:
    """Record how far the view is, in its transaction (the row is locked by `lock_checkpoint`).

    Raises:
        IntegrityError: not past the recorded position (eventsourcing's rule: tracking only moves forward).
    """
    cursor = await conn.execute(
        "UPDATE projector_checkpoints SET position = %s, updated_at = now() WHERE name = %s AND position < %s",
        (tracking.notification_id, tracking.application_name, tracking.notification_id),
    )
    if cursor.rowcount != 1:
        raise IntegrityError(f"Tracking {tracking} is not past {tracking.application_name}'s recorded position")


async def move_checkpoint(conn: Connection, name: str, position: int) -> None:
    """Set the checkpoint, also backwards: only a rebuild, which has just replaced the view, does this."""
    await conn.execute(
        "UPDATE projector_checkpoints SET position = %s, updated_at = now() WHERE name = %s", (position, name)
    )


async def load_checkpoint(conn: Connection, name: str) -> int:
    cursor = await conn.execute("SELECT position FROM projector_checkpoints WHERE name = %s", (name,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def projector_status(conn: Connection, name: str, *, inline: bool, now: datetime) -> ProjectorStatus:
    """An inline projector is always at the head (it commits with the events)."""
    if inline:
        head = await log_head(conn)
        return ProjectorStatus(
            projector=name, mode="inline", checkpoint=head, head=head, lag_positions=0, lag_seconds=0.0
        )
    behind = await lag(conn, await load_checkpoint(conn, name), now)
    return ProjectorStatus(
        projector=name,
        mode="process",
        checkpoint=behind.checkpoint,
        head=behind.head,
        lag_positions=behind.positions,
        lag_seconds=behind.seconds,
    )
