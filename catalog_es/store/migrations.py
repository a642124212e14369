"""Schema migrations: named SQL steps applied once each, in order, under an advisory lock."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from typing import Any

import msgspec
import psycopg

_LOCK_KEY = 0x63617461  # any fixed number: serialises concurrent `migrate` runs


class Migration(msgspec.Struct, frozen=True):
    """One step; its name is recorded once applied and never reused."""

    name: str
    sql: str


def packaged_sql(package: str, filename: str) -> str:
    """Read an SQL file shipped inside a package."""
    return files(package).joinpath(filename).read_text(encoding="utf-8")


EVENT_STORE_MIGRATIONS = (Migration("0001_event_store", packaged_sql("catalog_es.store", "eventstore.sql")),)


async def apply_migrations(conn: psycopg.AsyncConnection[Any], migrations: Sequence[Migration]) -> list[str]:
    """Apply the steps not applied yet; return their names. Safe to run again and concurrently."""
    applied_now: list[str] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        cursor = await conn.execute("SELECT name FROM schema_migrations")
        done = {str(row[0]) for row in await cursor.fetchall()}
        for migration in migrations:
            if migration.name in done:
                continue
            await conn.execute(migration.sql.encode())
            await conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (migration.name,))
            applied_now.append(migration.name)
    return applied_now
