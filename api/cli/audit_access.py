"""`catalog-es audit access --as-of T --object KIND:ID`: who held which privilege then, and which events granted it."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.session import DataDir, Json, cli_settings, fail, on_connection

if TYPE_CHECKING:
    from projections.permissions.as_of import AccessAsOf


def _object_id(value: str) -> uuid.UUID:
    """`table:<uuid>` (any kind prefix) or a bare id; anything else ends the command (exit 2)."""
    try:
        return uuid.UUID(value.rpartition(":")[2])
    except ValueError:
        fail(f"--object must be KIND:UUID or UUID, not {value!r}", 2)


def _print(result: AccessAsOf) -> None:
    from rich.console import Console  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from rich.table import Table  # noqa: PLC0415

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
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Who had which privilege on an object at a past instant, and which events granted it (replayed from the log)."""
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    from api.management.audit_params import parse_time  # noqa: PLC0415
    from projections.permissions.as_of import access_as_of  # noqa: PLC0415

    object_id = _object_id(object_ref)
    settings = cli_settings(data_dir)
    result = on_connection(settings, lambda conn: access_as_of(conn, object_id, parse_time(as_of, "--as-of"), user))
    if as_json:
        typer.echo(msgspec.json.encode(result).decode())
    else:
        _print(result)
