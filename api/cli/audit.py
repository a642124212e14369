"""`catalog-es audit …`: the event log as a filtered history, one entity's changes, the catalog as of T."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, TypeVar

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from api.cli.audit_access import access
from api.cli.audit_export import ExportResult, export_events
from api.container import open_services
from api.management.audit_params import event_filter, parse_time
from api.runtime.database import bootstrap, database_dsn, migrate
from api.settings import load_settings
from catalog_es.errors import BadRequestError, CatalogError
from catalog_es.identifiers import Namespace
from catalog_es.store.database import Connection, open_pool
from catalog_es.store.eventstore import EventMetadata, RecordedEvent
from projections.audit.as_of import CatalogAsOf, catalog_as_of
from projections.audit.history import EventFilter, history_entry, read_event_page
from projections.cloudevents import encode_structured

audit_cli = typer.Typer(help="Audit the catalog from its event log.", no_args_is_help=True)

DataDir = Annotated[
    str | None, typer.Option("--data-dir", help="Embedded mode's data directory [default: ./.catalog-es]")
]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output")]
_T = TypeVar("_T")


@asynccontextmanager
async def _connection(data_dir: str | None) -> AsyncIterator[Connection]:
    dsn = database_dsn(load_settings(data_dir=data_dir))
    await migrate(dsn)
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            yield conn
    finally:
        await pool.close()


def _run(data_dir: str | None, work: Callable[[Connection], Awaitable[_T]]) -> _T:
    """Run `work` on a connection; a bad filter or time is a usage error (exit 2), not a traceback."""

    async def _go() -> _T:
        async with _connection(data_dir) as conn:
            return await work(conn)

    try:
        return asyncio.run(_go())
    except BadRequestError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


async def _matching(conn: Connection, where: EventFilter, limit: int | None) -> list[RecordedEvent]:
    events: list[RecordedEvent] = []
    after: int | None = 0
    while after is not None and (limit is None or len(events) < limit):
        page = await read_event_page(conn, where, after=after, limit=1000)
        events += page.events
        after = page.next_after
    return events[:limit] if limit is not None else events


def _short_type(type_name: str) -> str:
    return type_name.removeprefix("io.catalog-es.").removesuffix(".v1")


def _print_history(events: list[RecordedEvent]) -> None:
    table = Table("position", "time", "actor", "type", "entity", "change")
    for event in events:
        entry = history_entry(event)
        change = entry.summary.describe() if entry.summary else ""
        table.add_row(
            str(event.position), event.time.isoformat(), entry.actor, _short_type(event.type), event.stream_id, change
        )
    Console(width=200).print(table)


@audit_cli.command("history")
def history(
    data_dir: DataDir = None,
    warehouse: Annotated[str | None, typer.Option(help="Warehouse id or name")] = None,
    namespace: Annotated[str | None, typer.Option(help="Namespace id or dotted name, e.g. sales.eu")] = None,
    table: Annotated[str | None, typer.Option(help="Table id, or identifier such as sales.orders")] = None,
    view: Annotated[str | None, typer.Option(help="View id, or identifier such as sales.v")] = None,
    entity: Annotated[str | None, typer.Option(help="One stream, e.g. table-<uuid>")] = None,
    event_type: Annotated[list[str] | None, typer.Option("--type", help="Event type, e.g. table.committed")] = None,
    actor: Annotated[str | None, typer.Option(help="Who caused the events")] = None,
    since: Annotated[str | None, typer.Option(help="From this ISO-8601 time (inclusive)")] = None,
    until: Annotated[str | None, typer.Option(help="Up to this ISO-8601 time (exclusive)")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most N events")] = None,
    as_json: Json = False,
) -> None:
    """The event log, filtered: a table with each change summarised, or CloudEvents JSON lines (--json)."""
    parts = namespace.split(".") if namespace else None
    for identifier in (table, view):
        if identifier and "." in identifier:
            *ns_parts, _ = identifier.split(".")
            parts = parts or ns_parts
    where_args = {
        "table": table.split(".")[-1] if table else None,
        "view": view.split(".")[-1] if view else None,
    }

    async def work(conn: Connection) -> list[RecordedEvent]:
        where = event_filter(
            warehouse=warehouse,
            namespace=parts,
            entity=entity,
            types=event_type,
            actor=actor,
            since=since,
            until=until,
            **where_args,
        )
        return await _matching(conn, where, limit)

    events = _run(data_dir, work)
    if as_json:
        sys.stdout.buffer.write(b"".join(encode_structured(event) + b"\n" for event in events))
        sys.stdout.flush()
    else:
        _print_history(events)


def _print_as_of(state: CatalogAsOf) -> None:
    console = Console(width=200)
    console.print(f"Catalog as of {state.time.isoformat()} (log position {state.position})")
    namespaces = Table("namespace", "properties", title="Namespaces")
    for ns in state.namespaces:
        namespaces.add_row(".".join(ns.namespace), msgspec.json.encode(ns.properties).decode())
    console.print(namespaces)
    for title, rows in (("Tables", state.tables), ("Views", state.views)):
        tabulars = Table("identifier", "metadata location", "current snapshot", "schema/version", title=title)
        for row in rows:
            version = row.current_schema_id if row.current_schema_id is not None else row.current_version_id
            tabulars.add_row(
                ".".join([*row.namespace, row.name]),
                row.metadata_location,
                str(row.current_snapshot_id or "-"),
                str(version if version is not None else "-"),
            )
        console.print(tabulars)


@audit_cli.command("as-of")
def as_of(
    time: Annotated[str, typer.Argument(help="ISO-8601 instant, e.g. 2026-01-31T12:00:00Z")],
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Namespaces, tables and views as they were at TIME, rebuilt from the event log alone."""
    try:
        at = parse_time(time)
    except BadRequestError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    state = _run(data_dir, lambda conn: catalog_as_of(conn, at))
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(state) + b"\n")
        sys.stdout.flush()
    else:
        _print_as_of(state)


async def _export(data_dir: str | None, warehouse: str, namespace: str, table: str) -> ExportResult:
    settings = load_settings(data_dir=data_dir)
    dsn = database_dsn(settings)
    await migrate(dsn)
    if settings.pg_dsn is None:  # embedded mode promises the default warehouse, served or not
        await bootstrap(dsn, settings)
    async with open_services(settings, dsn, pool_size=(1, 4)) as services, services.pool.connection() as conn:
        return await export_events(
            services.ctx,
            conn,
            warehouse=warehouse,
            namespace=Namespace(tuple(namespace.split("."))),
            table=table,
            meta=EventMetadata(actor="audit-export"),
        )


@audit_cli.command("export")
def export(
    data_dir: DataDir = None,
    warehouse: Annotated[str, typer.Option(help="Warehouse of this catalog to write to")] = "demo",
    namespace: Annotated[str, typer.Option(help="Namespace (dotted), created if missing")] = "audit",
    table: Annotated[str, typer.Option(help="Table name, created if missing")] = "catalog_events",
    as_json: Json = False,
) -> None:
    """Append the events not exported yet to an Iceberg table of this catalog (query it with Spark, pyiceberg …)."""
    try:
        result = asyncio.run(_export(data_dir, warehouse, namespace, table))
    except CatalogError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(msgspec.json.encode(result).decode())
    elif result.exported:
        typer.echo(
            f"exported {result.exported} events ({result.from_position}..{result.to_position}) to {result.table}"
        )
    else:
        typer.echo(f"{result.table} is up to date (position {result.to_position})")


audit_cli.command("access")(access)
