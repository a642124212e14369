"""Rebuild a projection while the catalog keeps serving: replay into a shadow schema, catch up, swap atomically."""

from __future__ import annotations

from collections.abc import Callable

from psycopg import sql

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import lock_writers, log_head
from projections.checkpoints import lock_checkpoint, move_checkpoint
from projections.registry import Projection
from projections.replay import current_schema, replay, scratch_schema

# Called with (position replayed, log head) after each batch.
RebuildProgress = Callable[[int, int], None]


async def rebuild_projection(
    conn: Connection,
    projection: Projection,
    *,
    batch: int = 5000,
    progress: RebuildProgress | None = None,
) -> int:
    """Rebuild `projection` from the log and swap it in; returns the position the new tables are at.

    Commits keep flowing during the replay. The final catch-up and the swap run in one transaction
    that holds the writers' counter lock (inline read models: no commit can slip between) or the
    projector's checkpoint row (process read models: its runner waits, then resumes after the swap).
    Only the projection's event types are read from the store; the position returned is the head all the same.
    """
    if not projection.rebuildable:
        raise ValueError(f"{projection.name} is only ever built forward, never rebuilt from the log")
    live = await current_schema(conn)
    async with scratch_schema(conn, projection, purpose="rebuild") as shadow:
        position, head = 0, await log_head(conn)

        def report(at: int) -> None:
            if progress:
                progress(at, max(head, at))

        while head - position > batch:  # catch up while writers continue; the rest is replayed under the lock
            async with conn.transaction():
                position = await replay(
                    conn, projection.project, head, after=position, progress=report, types=projection.types
                )
            head = await log_head(conn)
        async with conn.transaction():
            if projection.inline:
                await lock_writers(conn)
            else:
                await lock_checkpoint(conn, projection.name)
            head = await log_head(conn)
            position = await replay(conn, projection.project, after=position, progress=report, types=projection.types)
            for table in projection.tables:
                await conn.execute(
                    sql.SQL("DROP TABLE IF EXISTS {}.{}").format(sql.Identifier(live), sql.Identifier(table))
                )
                await conn.execute(
                    sql.SQL("ALTER TABLE {}.{} SET SCHEMA {}").format(
                        sql.Identifier(shadow), sql.Identifier(table), sql.Identifier(live)
                    )
                )
            if not projection.inline:
                await move_checkpoint(conn, projection.name, position)
    report(position)
    return position
