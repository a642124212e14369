"""`serve` and `migrate` on a database a newer version migrated: a clear message and exit code 2, no traceback."""

from __future__ import annotations

import asyncio

import typer

from api.runtime.database import migrate
from catalog_es.store.schema_guard import NewerSchemaError


def migrate_or_exit(dsn: str, allow_newer_schema: bool) -> list[str]:
    """Migrate; a newer schema ends the command with its message (which says how to force)."""
    try:
        return asyncio.run(migrate(dsn, allow_newer_schema=allow_newer_schema))
    except NewerSchemaError as refused:
        typer.echo(f"Error: {refused}", err=True)
        raise typer.Exit(2) from None
