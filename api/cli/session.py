"""What every `catalog-es` sub-command shares: its options, its settings, one database connection, clean signals.

This module imports only the standard library, typer and the settings, so that building the command
tree (and `--help`) costs nothing; the database and the web stack are imported when a command runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import msgspec
import typer

from api.settings import Settings, load_settings

if TYPE_CHECKING:
    from catalog_es.store.database import Connection

DataDir = Annotated[
    str | None, typer.Option("--data-dir", help="Embedded mode's data directory [default: ./.catalog-es]")
]
HealthPort = Annotated[
    int | None,
    typer.Option("--health-port", min=1, max=65535, help="Answer liveness probes (HTTP 200, any path) on this port"),
]
HealthHost = Annotated[str, typer.Option("--health-host", help="Address of the --health-port listener")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output")]
_T = TypeVar("_T")


def command_group(description: str) -> typer.Typer:
    """A Typer (sub-)app with plain help: typer's rich help formatter costs ~0.25 s of imports on every `--help`."""
    return typer.Typer(help=description, no_args_is_help=True, rich_markup_mode=None)


def fail(message: str, code: int = 1) -> NoReturn:
    """One line on stderr and a non-zero exit: an operator's mistake is never a traceback."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def cli_settings(data_dir: str | None, *, create: bool = False, **overrides: Any) -> Settings:
    """The settings for a command; in embedded mode the data dir must hold a catalog unless `create`.

    Only `serve` and `migrate` create a catalog: any other command on a mistyped `--data-dir` (or run from
    another directory) would otherwise start a new empty database and report an empty log as if all was well.
    """
    try:
        settings = load_settings(data_dir=data_dir, **overrides)
    except msgspec.ValidationError as exc:
        fail(f"invalid setting: {exc}", 2)
    if settings.pg_dsn is not None:
        return settings
    path = settings.data_path
    if path.exists() and not path.is_dir():
        fail(f"the data dir {path} is a file, not a directory (give --data-dir a directory)", 2)
    if not create and not (path / "pg").is_dir():
        fail(
            f"no catalog in {path}: give the --data-dir that `catalog-es serve` uses, "
            "create one with `catalog-es migrate --data-dir …`, or set CATALOG_ES__PG_DSN"
        )
    return settings


def cli_dsn(settings: Settings) -> str:
    """The database of these settings (the embedded one is started or joined)."""
    from api.runtime.database import database_dsn  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    return database_dsn(settings)


@asynccontextmanager
async def cli_connection(settings: Settings, *, migrate: bool = True) -> AsyncIterator[Connection]:
    """One connection to the settings' database, migrated first (a CLI of a newer version may add tables)."""
    from api.runtime.database import migrate as apply_migrations  # noqa: PLC0415
    from catalog_es.store.database import open_pool  # noqa: PLC0415

    dsn = cli_dsn(settings)
    if migrate:
        await apply_migrations(dsn)
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            yield conn
    finally:
        await pool.close()


def on_connection(settings: Settings, work: Callable[[Connection], Awaitable[_T]]) -> _T:
    """Run `work` on one connection; a catalog error is a clear message and a non-zero exit, not a traceback."""
    from catalog_es.errors import BadRequestError, CatalogError  # noqa: PLC0415

    async def _go() -> _T:
        async with cli_connection(settings) as conn:
            return await work(conn)

    try:
        return asyncio.run(_go())
    except BadRequestError as exc:
        fail(str(exc), 2)
    except CatalogError as exc:
        fail(str(exc))


async def until_signalled(work: Awaitable[None]) -> None:
    """Await `work`; SIGTERM or SIGINT cancels it cleanly (NATS and database connections closed)."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task
