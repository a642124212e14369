"""Refuse a database migrated by a newer catalog-es: its schema may hold what this code would misread or undo."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from catalog_es.store.migrations import Migration

FORCE_HINT = "pass --allow-newer-schema or set CATALOG_ES__ALLOW_NEWER_SCHEMA=true to run anyway"


class NewerSchemaError(RuntimeError):
    """The database records migrations this version does not know: it was migrated by a newer version."""

    def __init__(self, unknown: Sequence[str]) -> None:
        self.unknown = list(unknown)
        super().__init__(
            f"The database was migrated by a newer catalog-es (unknown migrations: {', '.join(self.unknown)});"
            f" upgrade catalog-es, or {FORCE_HINT}"
        )


async def check_not_newer(conn: psycopg.AsyncConnection[Any], known: Sequence[Migration]) -> None:
    """Raises NewerSchemaError when `schema_migrations` names a step `known` does not (a fresh database passes)."""
    cursor = await conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL")
    row = await cursor.fetchone()
    if not row or not row[0]:
        return
    cursor = await conn.execute("SELECT name FROM schema_migrations ORDER BY applied_at, name")
    names = {migration.name for migration in known}
    unknown = [str(name) for (name,) in await cursor.fetchall() if name not in names]
    if unknown:
        raise NewerSchemaError(unknown)
