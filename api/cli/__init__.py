"""The `catalog-es` command line: a root Typer over sub-command modules that import their dependencies lazily.

Building this tree imports typer, the settings and the sub-command modules, never the web stack, the
database driver or pyiceberg: `catalog-es --help` (and a mistyped command) answers at once.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer

from api.cli.audit import audit_cli
from api.cli.config import config_cli
from api.cli.events import events_cli
from api.cli.maintenance import maintenance_cli
from api.cli.projections import projections_cli, projector_cli
from api.cli.relay import relay
from api.cli.serve import migrate_command, serve
from api.cli.session import command_group
from api.cli.spark import spark_cli
from api.cli.worker import worker
from catalog_es.storage.outbound import disable_ambient_identity

cli = command_group("catalog-es: an event-sourced Apache Iceberg REST catalog.")
cli.command()(serve)
cli.command("migrate")(migrate_command)
cli.command()(relay)
cli.command()(worker)
cli.add_typer(events_cli, name="events")
cli.add_typer(audit_cli, name="audit")
cli.add_typer(projector_cli, name="projector")
cli.add_typer(projections_cli, name="projections")
cli.add_typer(spark_cli, name="spark")
cli.add_typer(maintenance_cli, name="maintenance")
cli.add_typer(config_cli, name="config")


def _print_version(requested: bool) -> None:
    """Eager, so `--version` answers before any command runs: it needs no settings, data dir or database."""
    if not requested:
        return
    try:
        installed = version("catalog-es")
    except PackageNotFoundError:  # run from a source tree that was never installed
        installed = "unknown (not installed)"
    typer.echo(f"catalog-es {installed}")
    raise typer.Exit


@cli.callback()
def _root(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit")
    ] = False,
) -> None:
    """catalog-es: an event-sourced Apache Iceberg REST catalog."""


def main() -> None:
    disable_ambient_identity()  # every command, before pyarrow's AWS SDK or boto3 start
    cli()
