"""`catalog-es audit access-log`: refused attempts (who, what, when, why) from the access audit log."""

from __future__ import annotations

import asyncio
from typing import Annotated

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from api.management.audit_params import parse_time
from api.runtime.database import database_dsn, migrate
from api.settings import load_settings
from catalog_es.errors import BadRequestError
from catalog_es.store.access_log import AccessRecord, read_access_log
from catalog_es.store.database import open_pool

_PAGE = 1000


async def _load(data_dir: str | None, actor: str | None, since: str | None, limit: int | None) -> list[AccessRecord]:
    start = parse_time(since, "--since") if since else None
    dsn = database_dsn(load_settings(data_dir=data_dir))
    await migrate(dsn)
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        records: list[AccessRecord] = []
        async with pool.connection() as conn:
            while limit is None or len(records) < limit:
                after = records[-1].id if records else 0
                page = await read_access_log(conn, after=after, limit=_PAGE, actor=actor, since=start)
                records += page
                if len(page) < _PAGE:
                    break
        return records[:limit] if limit is not None else records
    finally:
        await pool.close()


def access_log(
    actor: Annotated[str | None, typer.Option(help="Only this actor, e.g. oidc~alice")] = None,
    since: Annotated[str | None, typer.Option(help="ISO-8601 instant, e.g. 2026-01-31T12:00:00Z")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many records")] = None,
    data_dir: Annotated[str | None, typer.Option("--data-dir", help="Embedded mode's data directory")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines")] = False,
) -> None:
    """Refused attempts, oldest first: 403s, and 404s for objects the caller may not see (`hidden`)."""
    try:
        records = asyncio.run(_load(data_dir, actor, since, limit))
    except BadRequestError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        for record in records:
            typer.echo(msgspec.json.encode(record).decode())
        return
    table = Table("id", "time", "actor", "decision", "status", "request", "reason", "request id")
    for r in records:
        request, time = f"{r.method} {r.path} ({r.operation})", r.time.isoformat()
        table.add_row(str(r.id), time, r.actor, r.decision, str(r.status), request, r.reason, r.request_id)
    Console().print(table)
