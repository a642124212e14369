"""`catalog-es audit …`: the event log as a filtered history, one entity's changes, the catalog as of T, export."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli.audit_access import access
from api.cli.audit_access_log import access_log
from api.cli.projections import audit_verify
from api.cli.session import DataDir, Json, cli_dsn, cli_settings, command_group, fail, on_connection

if TYPE_CHECKING:
    from api.cli.audit_export import ExportResult
    from api.settings import Settings
    from catalog_es.store.database import Connection
    from catalog_es.store.eventstore import RecordedEvent
    from projections.audit.as_of import CatalogAsOf
    from projections.audit.history import EventFilter

audit_cli = command_group("Audit the catalog from its event log.")
_PAGE = 1000


async def _newest(conn: Connection, where: EventFilter, limit: int | None) -> list[RecordedEvent]:
    """The matching events in log order; with `limit` only the newest N."""
    from projections.audit.history import read_event_page  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    events: list[RecordedEvent] = []
    after: int | None = 0
    while after is not None:
        page = await read_event_page(conn, where, after=after, limit=_PAGE)
        events += page.events
        if limit is not None:
            events = events[-limit:]
        after = page.next_after
    return events


async def _require_known(conn: Connection, **criterion: Any) -> None:
    """An unknown warehouse, namespace, table or view is an error, not an empty history that looks like no changes.

    Known means: named in the log at some time (dropped and renamed entities keep their history).
    """
    from api.management.audit_params import event_filter  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from projections.audit.history import read_event_page  # noqa: PLC0415

    for kind, value in criterion.items():
        if value is None:
            continue
        page = await read_event_page(conn, event_filter(**{kind: value}), limit=1)
        if not page.events:
            shown = ".".join(value) if isinstance(value, list) else value
            fail(f"no {kind} {shown!r} in this catalog's log (check the name and --data-dir)")


def _print_history(events: list[RecordedEvent], names: dict[str, str], documents: dict[int, Any]) -> None:
    from rich.console import Console  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from rich.table import Table  # noqa: PLC0415

    from api.cli.audit_display import describe  # noqa: PLC0415
    from catalog_es.events.base import split_stream_id  # noqa: PLC0415
    from catalog_es.events.registry import short_type  # noqa: PLC0415

    table = Table("position", "time", "actor", "type", "entity", "change")
    for event in reversed(events):  # newest first: what an operator looks for
        kind = split_stream_id(event.stream_id)[0]
        entity = f"{kind} {names[event.stream_id]}" if event.stream_id in names else event.stream_id
        actor = str(event.extensions.get("actor", "anonymous"))
        change = describe(event, documents.get(event.position))
        row = (str(event.position), event.time.isoformat(), actor, short_type(event.type), entity, change)
        table.add_row(*row)
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
    limit: Annotated[int | None, typer.Option(min=1, help="Only the newest N events")] = None,
    as_json: Json = False,
) -> None:
    """The event log, filtered: a table newest first with names and each change summarised, or CloudEvents JSON
    lines in log order (--json)."""
    from api.management.audit_params import event_filter  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    settings = cli_settings(data_dir)
    parts = namespace.split(".") if namespace else None

    async def work(conn: Connection) -> tuple[list[RecordedEvent], dict[str, str], dict[int, Any]]:
        from api.cli.audit_display import entity_names  # noqa: PLC0415
        from projections.audit.history import commit_documents  # noqa: PLC0415

        await _require_known(conn, table=table, view=view, namespace=parts, warehouse=warehouse)
        where = event_filter(
            warehouse=warehouse,
            namespace=parts,
            entity=entity,
            types=event_type,
            actor=actor,
            since=since,
            until=until,
            table=table,
            view=view,
        )
        events = await _newest(conn, where, limit)
        if as_json:
            return events, {}, {}
        return events, await entity_names(conn, events), await commit_documents(conn, events)

    events, names, documents = on_connection(settings, work)
    if as_json:
        from projections.cloudevents import encode_structured  # noqa: PLC0415

        sys.stdout.buffer.write(b"".join(encode_structured(event) + b"\n" for event in events))
        sys.stdout.flush()
    else:
        _print_history(events, names, documents)


def _print_as_of(state: CatalogAsOf) -> None:
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

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
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    from api.management.audit_params import parse_time  # noqa: PLC0415
    from catalog_es.errors import BadRequestError  # noqa: PLC0415
    from projections.audit.as_of import catalog_as_of  # noqa: PLC0415

    try:
        at = parse_time(time)
    except BadRequestError as exc:
        fail(str(exc), 2)
    state = on_connection(cli_settings(data_dir), lambda conn: catalog_as_of(conn, at))
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(state) + b"\n")
        sys.stdout.flush()
    else:
        _print_as_of(state)


async def _export(
    settings: Settings, warehouse: str, namespace: str, table: str, *, access_log: bool = False
) -> ExportResult:
    from api.cli.access_log_export import export_access_log  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.cli.audit_export import export_events  # noqa: PLC0415
    from api.container import open_services  # noqa: PLC0415
    from api.runtime.database import bootstrap, migrate  # noqa: PLC0415
    from catalog_es.identifiers import Namespace  # noqa: PLC0415
    from catalog_es.store.eventstore import EventMetadata  # noqa: PLC0415

    dsn = cli_dsn(settings)
    await migrate(dsn)
    if settings.pg_dsn is None:  # embedded mode promises the default warehouse, served or not
        await bootstrap(dsn, settings)
    async with open_services(settings, dsn, pool_size=(1, 4)) as services, services.pool.connection() as conn:
        exporter = export_access_log if access_log else export_events
        return await exporter(
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
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    from catalog_es.errors import CatalogError  # noqa: PLC0415

    settings = cli_settings(data_dir)
    try:
        result = asyncio.run(_export(settings, warehouse, namespace, table))
    except CatalogError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(msgspec.json.encode(result).decode())
    elif result.exported:
        typer.echo(
            f"exported {result.exported} events ({result.from_position}..{result.to_position}) to {result.table}"
        )
    else:
        typer.echo(f"{result.table} is up to date (position {result.to_position})")


@audit_cli.command("export-access-log")
def export_access_log(
    data_dir: DataDir = None,
    warehouse: Annotated[str, typer.Option(help="Warehouse of this catalog to write to")] = "demo",
    namespace: Annotated[str, typer.Option(help="Namespace (dotted), created if missing")] = "audit",
    table: Annotated[str, typer.Option(help="Table name, created if missing")] = "access_log",
    as_json: Json = False,
) -> None:
    """Append the access-log records not exported yet (refusals, audited reads) to an Iceberg table of this catalog."""
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    from catalog_es.errors import CatalogError  # noqa: PLC0415

    try:
        result = asyncio.run(_export(cli_settings(data_dir), warehouse, namespace, table, access_log=True))
    except CatalogError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(msgspec.json.encode(result).decode())
    elif result.exported:
        typer.echo(
            f"exported {result.exported} records (ids {result.from_position}..{result.to_position}) to {result.table}"
        )
    else:
        typer.echo(f"{result.table} is up to date (record {result.to_position})")


audit_cli.command("access")(access)
audit_cli.command("verify")(audit_verify)
audit_cli.command("access-log")(access_log)
