"""`catalog-es import`: bring a whole catalog (or chosen namespaces) from any catalog pyiceberg loads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli.session import DataDir, cli_dsn, cli_settings, fail, on_connection

if TYPE_CHECKING:
    from api.imports.catalog import Source
    from api.settings import Settings
    from catalog_es.store.database import Connection

SourceProperty = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        "-s",
        help="A pyiceberg catalog property of the source, KEY=VALUE (repeat): type=sql uri=sqlite:///c.db, "
        "type=glue glue.region=…, type=rest uri=… credential=… warehouse=…",
    ),
]


def _properties(pairs: list[str]) -> dict[str, str]:
    malformed = [pair for pair in pairs if "=" not in pair]
    if malformed or not pairs:
        fail(f"--source takes KEY=VALUE pairs (at least type or uri), got {malformed or 'none'}", 2)
    return dict(pair.split("=", 1) for pair in pairs)


async def _import(settings: Settings, dsn: str, found: Source, warehouse: str, label: str, *, dry_run: bool) -> int:
    """Check coverage, plan, apply with a progress bar, print the summary; the exit code."""
    from rich.console import Console  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from api.container import open_services  # noqa: PLC0415
    from api.imports.catalog import apply, apply_grants, plan, uncovered  # noqa: PLC0415
    from catalog_es.identifiers import NIL_PROJECT_ID  # noqa: PLC0415

    console = Console(stderr=True)
    async with open_services(settings, dsn, pool_size=(1, 2)) as services:
        async with services.pool.connection() as conn:
            row = await services.read_model.warehouse_by_name(conn, NIL_PROJECT_ID, warehouse)
        if row is None:
            fail(f"no warehouse {warehouse!r} in the default project")
        missing = uncovered(found, row)
        if missing:
            console.print(f"[red]Warehouse {warehouse!r} ({row.location}) does not cover these locations:[/red]")
            for location in missing:
                typer.echo(location)
            console.print("Nothing was imported.")
            return 1
        actions = await plan(services.ctx, row.id, found)
        summary = Table("action", "count", title="Import" + (" (dry run)" if dry_run else ""))
        counts: dict[str, int] = {}
        for action in actions:
            counts[action.kind] = counts.get(action.kind, 0) + 1
        if dry_run:
            for action in actions:
                typer.echo(f"{action.kind}\t{action.target}")
        else:
            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            with Progress(*columns, console=console) as progress:
                task = progress.add_task("Importing", total=len(actions))
                await apply(
                    services.ctx,
                    row.id,
                    label,
                    actions,
                    actor="import",
                    done=lambda _: progress.advance(task),
                )
            if found.grants:
                recorded, skipped = await apply_grants(services.ctx, row.id, found, actor="import")
                counts["grant"], counts["grant-skipped"] = recorded, skipped
        for kind, count in sorted(counts.items()):
            summary.add_row(kind, str(count))
        unchanged = len(found.namespaces) + len(found.tabulars) - len(actions)
        summary.add_row("unchanged", str(unchanged))
        console.print(summary)
        if counts.get("view-conflict"):
            console.print("[yellow]Views with other metadata under the same name were left as they are.[/yellow]")
        return 0


def import_catalog(
    warehouse: Annotated[str, typer.Option("--warehouse", "-w", help="The target warehouse's name")],
    source: SourceProperty = None,
    manifest: Annotated[
        Path | None, typer.Option("--manifest", help="Import a manifest `catalog-es export-catalog` wrote instead")
    ] = None,
    data_dir: DataDir = None,
    namespace: Annotated[
        list[str] | None, typer.Option("--namespace", "-n", help="Only this namespace and below (dotted; repeat)")
    ] = None,
    source_name: Annotated[
        str | None, typer.Option("--source-name", help="How events name the source [default: <type>:<uri>]")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be imported; write nothing")] = False,
    catalog_name: Annotated[
        str, typer.Option("--catalog-name", help="The source catalog's name (a SQL catalog keys its rows by it)")
    ] = "default",
) -> None:
    """Import namespaces (with properties), tables (at their current metadata) and views into a warehouse.

    Files stay where they are: the warehouse must cover every table location (else nothing is written and the
    uncovered locations are listed). Re-running imports only what is new or changed, and resumes an import
    that stopped half way.
    """
    import msgspec  # noqa: PLC0415
    from pyiceberg.catalog import load_catalog  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from rich.console import Console  # noqa: PLC0415

    from api.imports.catalog import only_below, read_source, source_from_manifest, source_label  # noqa: PLC0415
    from api.runtime.schema_check import migrate_or_exit  # noqa: PLC0415
    from catalog_es.errors import BadRequestError, CatalogError  # noqa: PLC0415

    console = Console(stderr=True)
    settings = cli_settings(data_dir)
    dsn = cli_dsn(settings)
    migrate_or_exit(dsn, settings.allow_newer_schema)
    only = [tuple(name.split(".")) for name in namespace or []]
    if manifest is not None:
        try:
            found = source_from_manifest(msgspec.json.decode(manifest.read_bytes()), source_name)
        except (OSError, msgspec.DecodeError, BadRequestError, KeyError, TypeError) as exc:
            fail(f"cannot read the manifest {manifest}: {exc}", 2)
        found = only_below(found, only)
        label = found.label
    else:
        properties = _properties(source or [])
        label = source_label(properties, source_name)
        with console.status(f"Reading {label} …"):
            source_catalog = load_catalog(catalog_name, **properties)
            found = read_source(source_catalog, label, only)
    tables = sum(1 for t in found.tabulars if t.kind == "table")
    console.print(
        f"Source {label}: {len(found.namespaces)} namespaces, {tables} tables, {len(found.tabulars) - tables} views"
        + ("" if found.views_readable else " (this source cannot list views)")
    )

    try:
        code = asyncio.run(_import(settings, dsn, found, warehouse, label, dry_run=dry_run))
    except CatalogError as exc:
        fail(str(exc))
    if code:
        raise typer.Exit(code)


def export_catalog(
    warehouse: Annotated[str, typer.Option("--warehouse", "-w", help="The warehouse to export")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the manifest (JSON)")],
    data_dir: DataDir = None,
    source_name: Annotated[
        str | None, typer.Option("--source-name", help="How the manifest names this catalog [default: its URI]")
    ] = None,
) -> None:
    """Write a portable manifest of a warehouse (namespaces, properties, metadata locations, grants) that
    `catalog-es import --manifest` reads; no file of a table is touched, no secret is written."""
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    from api.runtime.catalog_export import export_manifest  # noqa: PLC0415
    from catalog_es.identifiers import NIL_PROJECT_ID  # noqa: PLC0415
    from projections.catalog.queries import CatalogReadModel  # noqa: PLC0415

    settings = cli_settings(data_dir)
    label = source_name or f"{settings.public_uri}#{warehouse}"

    async def _work(conn: Connection) -> dict[str, Any]:
        row = await CatalogReadModel().warehouse_by_name(conn, NIL_PROJECT_ID, warehouse)
        if row is None:
            fail(f"no warehouse {warehouse!r} in the default project")
        return await export_manifest(conn, row.id, label)

    document = on_connection(settings, _work)
    output.write_bytes(msgspec.json.format(msgspec.json.encode(document)) + b"\n")
    typer.echo(
        f"wrote {output}: {len(document['namespaces'])} namespaces, {len(document['tables'])} tables,"
        f" {len(document['views'])} views, {len(document['grants'])} grants"
    )
