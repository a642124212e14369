"""Replay the event log into fresh read-model tables, and compare read models row by row."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from catalog_es.database import Connection
from catalog_es.eventstore import read_events
from projections.catalog_projector import READ_MODEL_TABLES, project_catalog
from projections.read_model_migrations import READ_MODEL_MIGRATIONS

_BATCH = 1000

Rows = dict[str, list[tuple[Any, ...]]]


async def rebuild_into(conn: Connection, schema: str) -> int:
    """Create `schema` with empty read models and replay the whole log into it; returns the events applied."""
    applied = 0
    async with conn.transaction():
        await conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        await conn.execute(sql.SQL("SET LOCAL search_path TO {}, public").format(sql.Identifier(schema)))
        for migration in READ_MODEL_MIGRATIONS:
            await conn.execute(migration.sql.encode())
        while batch := await read_events(conn, after=applied, limit=_BATCH):
            await project_catalog(conn, batch)
            applied = batch[-1].position
    return applied


async def read_model_rows(conn: Connection, schema: str) -> Rows:
    """Every row of every catalog read model in `schema`, in a stable order."""
    rows: Rows = {}
    for table in READ_MODEL_TABLES:
        query = sql.SQL("SELECT * FROM {}.{} ORDER BY id").format(sql.Identifier(schema), sql.Identifier(table))
        cursor = await conn.execute(query)
        rows[table] = list(await cursor.fetchall())
    return rows
