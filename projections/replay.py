"""Replay the event log into fresh read-model tables, and compare read models row by row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psycopg import sql

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import InlineProjector, check_contiguous, read_events
from catalog_es.store.migrations import Migration
from projections.catalog.migrations import READ_MODEL_MIGRATIONS
from projections.catalog.projector import READ_MODEL_TABLES, project_catalog

_BATCH = 1000

Rows = dict[str, list[tuple[Any, ...]]]
Progress = Callable[[int], None]


async def rebuild_into(conn: Connection, schema: str) -> int:
    """Create `schema` with empty read models and replay the whole log into it; returns the events applied."""
    async with conn.transaction():
        await create_read_models(conn, schema, READ_MODEL_MIGRATIONS)
        return await replay(conn, schema, project_catalog, after=0)


async def create_read_models(conn: Connection, schema: str, migrations: Sequence[Migration]) -> None:
    """Create `schema` holding empty tables from the read model's migrations (inside the caller's transaction)."""
    await conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    await use_schema(conn, schema)
    for migration in migrations:
        await conn.execute(migration.sql.encode())


async def use_schema(conn: Connection, schema: str) -> None:
    """Until the transaction ends, unqualified read-model names mean `schema` (the log stays where it is)."""
    await conn.execute(
        "SELECT set_config('search_path', quote_ident(%s) || ', ' || current_setting('search_path'), true)", (schema,)
    )


async def replay(
    conn: Connection,
    schema: str,
    apply: InlineProjector,
    *,
    after: int,
    until: int | None = None,
    batch: int = _BATCH,
    progress: Progress | None = None,
) -> int:
    """Apply the events after `after` (through `until`) to `schema`'s tables, in the caller's transaction."""
    await use_schema(conn, schema)
    while events := await read_events(conn, after=after, limit=batch):
        check_contiguous(after, events)
        if until is not None:
            events = [e for e in events if e.position <= until]
            if not events:
                break
        async with conn.pipeline():  # one round trip per batch instead of one per statement
            await apply(conn, events)
        after = events[-1].position
        if progress:
            progress(after)
        if until is not None and after >= until:
            break
    return after


async def read_model_rows(conn: Connection, schema: str) -> Rows:
    """Every row of every catalog read model in `schema`, in a stable order."""
    rows: Rows = {}
    for table in READ_MODEL_TABLES:
        query = sql.SQL("SELECT * FROM {}.{} ORDER BY id").format(sql.Identifier(schema), sql.Identifier(table))
        cursor = await conn.execute(query)
        rows[table] = list(await cursor.fetchall())
    return rows
