"""Replay the event log into a projection's tables inside a scratch schema (rebuild, verify, both as-of reads)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager

from psycopg import pq, sql

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import InlineProjector, read_batch
from projections.registry import Projection

_BATCH = 1000

Progress = Callable[[int], None]


async def current_schema(conn: Connection) -> str:
    """Where the live read models are (the first schema of the search path)."""
    cursor = await conn.execute("SELECT current_schema()")
    row = await cursor.fetchone()
    return str(row[0]) if row else "public"


@asynccontextmanager
async def scratch_schema(
    conn: Connection, projection: Projection, *, purpose: str = "scratch", unique: bool = False
) -> AsyncIterator[str]:
    """A fresh schema holding `projection`'s empty tables, first on the search path until the block ends.

    The search path is set for the session, not the transaction, so a rebuild can replay into it over
    several transactions; inside a transaction that is rolled back (verify, as-of) everything, the
    setting included, disappears with it. `unique` names it per call, for reads that may run at once.
    """
    schema = f"{purpose}_{projection.name}" + (f"_{uuid.uuid4().hex}" if unique else "")
    cursor = await conn.execute("SELECT current_setting('search_path')")
    row = await cursor.fetchone()
    previous = str(row[0]) if row else "public"
    await conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    async with conn.transaction():
        await conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        await conn.execute("SELECT set_config('search_path', quote_ident(%s) || ', ' || %s, false)", (schema, previous))
        for migration in projection.migrations:
            await conn.execute(migration.sql.encode())
    try:
        yield schema
    finally:
        if conn.info.transaction_status != pq.TransactionStatus.INERROR:
            await conn.execute("SELECT set_config('search_path', %s, false)", (previous,))
            await conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


async def replay(
    conn: Connection,
    apply: InlineProjector,
    until: int | None = None,
    *,
    after: int = 0,
    batch: int = _BATCH,
    progress: Progress | None = None,
    types: Collection[str] | None = None,
) -> int:
    """Apply the events after `after` (through `until`, else the head) to the tables the search path finds first, in
    the caller's transaction; returns the position replayed through. With `types` (a projection's), the store reads
    only events of those types; without, every event, checked gap-free."""
    while until is None or after < until:
        read = await read_batch(conn, after=after, limit=batch, until=until, types=types)
        if read.events:
            async with conn.pipeline():  # one round trip per batch instead of one per statement
                await apply(conn, read.events)
        if read.through == after:
            break
        after = read.through
        if progress:
            progress(after)
    return after
