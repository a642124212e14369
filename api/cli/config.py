"""`catalog-es config reference`: write (or check) the configuration reference generated from the settings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from api.cli.session import command_group, fail

config_cli = command_group("The settings: every CATALOG_ES__* variable and storage-profile field, documented.")


@config_cli.command("reference")
def reference_command(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write it here (deploy/CONFIGURATION.md); default: stdout")
    ] = None,
    check: Annotated[bool, typer.Option("--check", help="Exit 1 when --output differs from what is generated")] = False,
) -> None:
    """Print the configuration reference, generated from api/settings.py and the storage-profile classes."""
    from api.config_reference import render  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    text = render()
    if output is None:
        if check:
            fail("--check needs --output", 2)
        typer.echo(text, nl=False)
        return
    if check:
        if not output.is_file() or output.read_text(encoding="utf-8") != text:
            fail(f"{output} is stale: run `catalog-es config reference --output {output}`", 1)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}", err=True)
