"""`catalog-es audit access-log`: refused attempts (who, what, when, why) from the access audit log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.session import DataDir, Json, cli_settings, on_connection

if TYPE_CHECKING:
    from catalog_es.store.access_log import AccessRecord
    from catalog_es.store.database import Connection

_PAGE = 1000


def access_log(
    actor: Annotated[str | None, typer.Option(help="Only this actor, e.g. oidc~alice")] = None,
    since: Annotated[str | None, typer.Option(help="ISO-8601 instant, e.g. 2026-01-31T12:00:00Z")] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many records")] = None,
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Refused attempts, oldest first: 403s, and 404s for objects the caller may not see (`hidden`)."""
    from api.management.audit_params import parse_time  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from catalog_es.store.access_log import read_access_log  # noqa: PLC0415

    async def load(conn: Connection) -> list[AccessRecord]:
        start = parse_time(since, "--since") if since else None
        records: list[AccessRecord] = []
        while limit is None or len(records) < limit:
            after = records[-1].id if records else 0
            page = await read_access_log(conn, after=after, limit=_PAGE, actor=actor, since=start)
            records += page
            if len(page) < _PAGE:
                break
        return records[:limit] if limit is not None else records

    records = on_connection(cli_settings(data_dir), load)
    if as_json:
        import msgspec  # noqa: PLC0415

        for record in records:
            typer.echo(msgspec.json.encode(record).decode())
        return
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    table = Table("id", "time", "actor", "decision", "status", "request", "reason", "request id")
    for r in records:
        request, time = f"{r.method} {r.path} ({r.operation})", r.time.isoformat()
        table.add_row(str(r.id), time, r.actor, r.decision, str(r.status), request, r.reason, r.request_id)
    Console().print(table)
