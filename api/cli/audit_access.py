"""`catalog-es audit access --as-of T --object KIND:ID`: who held which privilege then, and which events granted it."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from api.management.audit_params import parse_time
from api.runtime.database import database_dsn, migrate
from api.settings import load_settings
from catalog_es.errors import BadRequestError
from catalog_es.store.database import open_pool
from projections.permissions.as_of import AccessAsOf, access_as_of


def _object_id(value: str) -> uuid.UUID:
    """`table:<uuid>` (any kind prefix) or a bare id. Raises: BadRequestError."""
    try:
        return uuid.UUID(value.rpartition(":")[2])
    except ValueError:
        raise BadRequestError(f"--object must be KIND:UUID or UUID, not {value!r}") from None


async def _load(data_dir: str | None, object_id: uuid.UUID, as_of: str, user: str | None) -> AccessAsOf:
    dsn = database_dsn(load_settings(data_dir=data_dir))
    await migrate(dsn)
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            return await access_as_of(conn, object_id, parse_time(as_of, "--as-of"), user)
    finally:
        await pool.close()


def _print(result: AccessAsOf) -> None:
    console = Console()
    if result.object_kind is None:
        console.print(f"{result.object_id} did not exist at {result.time.isoformat()} (position {result.position})")
        return
    console.print(f"{result.object_kind} {result.object_id} at {result.time.isoformat()} (position {result.position})")
    table = Table("user", "privileges", "granted as", "on", "by event (position, time, actor)")
    for entry in result.access:
        for index, reason in enumerate(entry.because):
            event = reason.event
            origin = f"{event.position} {event.time.isoformat()} {event.actor} {event.type}" if event else "?"
            table.add_row(
                entry.user if index == 0 else "",
                ", ".join(entry.privileges) if index == 0 else "",
                f"{reason.privilege} ({reason.principal})",
                f"{reason.object_kind} {reason.object_id}",
                origin,
            )
    console.print(table)


def access(
    object_ref: Annotated[str, typer.Option("--object", help="KIND:ID, e.g. table:0b6e…, or an id")],
    as_of: Annotated[str, typer.Option("--as-of", help="ISO-8601 instant, e.g. 2026-01-31T12:00:00Z")],
    user: Annotated[str | None, typer.Option(help="Only this user, e.g. oidc~alice")] = None,
    data_dir: Annotated[str | None, typer.Option("--data-dir", help="Embedded mode's data directory")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output")] = False,
) -> None:
    """Who had which privilege on an object at a past instant, and which events granted it (replayed from the log)."""
    try:
        result = asyncio.run(_load(data_dir, _object_id(object_ref), as_of, user))
    except BadRequestError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(msgspec.json.encode(result).decode())
    else:
        _print(result)
