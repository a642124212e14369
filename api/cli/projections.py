"""`catalog-es projector run|status`, `projections rebuild` and `audit verify`: the projections' operator commands."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import msgspec
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text

from api.runtime.database import database_dsn, migrate
from api.settings import load_settings
from catalog_es.store.database import Connection, open_pool
from projections.rebuild import rebuild_projection
from projections.registry import PROCESS_PROJECTIONS, PROJECTIONS, Projection, all_statuses, projection
from projections.runner import run_projectors
from projections.verify import Verification, verify_projection

projector_cli = typer.Typer(help="Run projector processes and show their checkpoints.", no_args_is_help=True)
projections_cli = typer.Typer(help="Rebuild read models from the event log.", no_args_is_help=True)

DataDir = Annotated[
    str | None, typer.Option("--data-dir", help="Embedded mode's data directory [default: ./.catalog-es]")
]
Name = Annotated[str | None, typer.Argument(help="Projection name (see `catalog-es projector status`)")]
All = Annotated[bool, typer.Option("--all", help="Every projection")]
_T = TypeVar("_T")


def _chosen(name: str | None, every: bool, candidates: tuple[Projection, ...]) -> tuple[Projection, ...]:
    if every == (name is not None):
        typer.echo("error: give a projection NAME or --all", err=True)
        raise typer.Exit(2)
    if every:
        return candidates
    try:
        chosen = projection(name or "")
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(2) from None
    if chosen not in candidates:
        typer.echo(f"error: {chosen.name} is projected inline by the API, not by a process", err=True)
        raise typer.Exit(2)
    return (chosen,)


@asynccontextmanager
async def _connection(dsn: str) -> AsyncIterator[Connection]:
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            yield conn
    finally:
        await pool.close()


def _on_connection(data_dir: str | None, work: Callable[[Connection], Awaitable[_T]]) -> _T:
    dsn = database_dsn(load_settings(data_dir=data_dir))

    async def _go() -> _T:
        await migrate(dsn)
        async with _connection(dsn) as conn:
            return await work(conn)

    return asyncio.run(_go())


@projector_cli.command("run")
def run(
    name: Name = None,
    every: All = False,
    data_dir: DataDir = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Events per transaction")] = 500,
    poll_seconds: Annotated[float, typer.Option(min=0.01, help="Poll interval when no NOTIFY arrives")] = 1.0,
) -> None:
    """Follow the event log from the checkpoint and keep the read model(s) up to date (until stopped)."""
    from api.cli import _until_signalled  # noqa: PLC0415 - api.cli imports this module

    chosen = _chosen(name, every, PROCESS_PROJECTIONS)
    dsn = database_dsn(load_settings(data_dir=data_dir))
    asyncio.run(migrate(dsn))
    work = run_projectors(dsn, chosen, batch_size=batch_size, poll_seconds=poll_seconds)

    async def _go() -> None:
        await _until_signalled(asyncio.ensure_future(work))

    asyncio.run(_go())


@projector_cli.command("status")
def status(data_dir: DataDir = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Each projector's checkpoint, the log head and the lag."""
    statuses = _on_connection(data_dir, lambda conn: all_statuses(conn, datetime.now(UTC)))
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(statuses) + b"\n")
        return
    from rich.table import Table  # noqa: PLC0415

    table = Table("projector", "mode", "checkpoint", "head", "lag (events)", "lag (s)")
    for s in statuses:
        table.add_row(s.projector, s.mode, str(s.checkpoint), str(s.head), str(s.lag_positions), f"{s.lag_seconds:.1f}")
    Console().print(table)


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{task.speed or 0:,.0f} events/s")


@projections_cli.command("rebuild")
def rebuild(name: Name = None, every: All = False, data_dir: DataDir = None) -> None:
    """Replay the log into shadow tables, catch up with the live log, then swap them in atomically."""
    chosen = _chosen(name, every, PROJECTIONS)
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), _RateColumn(), TimeRemainingColumn()
    )

    async def work(conn: Connection) -> list[int]:
        done = []
        for p in chosen:
            task = progress.add_task(p.name, total=None)

            def report(position: int, head: int, task: Any = task) -> None:
                progress.update(task, completed=position, total=head)

            done.append(await rebuild_projection(conn, p, progress=report))
        return done

    with progress:
        positions = _on_connection(data_dir, work)
    for p, position in zip(chosen, positions, strict=True):
        typer.echo(f"{p.name}: rebuilt through position {position} and swapped in")


def _print_verification(result: Verification) -> None:
    verdict = "identical" if result.identical else "DIFFERENT"
    typer.echo(f"{result.projection} (through position {result.position}): {verdict}")
    for diff in result.diffs:
        for row in diff.only_live:
            typer.echo(f"  {diff.table} live only:   {row!r}")
        for row in diff.only_replay:
            typer.echo(f"  {diff.table} replay only: {row!r}")


def audit_verify(name: Name = None, data_dir: DataDir = None) -> None:
    """Recompute every read model (or NAME) from the log and diff it with the live one; exit 1 on any difference."""
    chosen = _chosen(name, name is None, PROJECTIONS)

    async def work(conn: Connection) -> list[Verification]:
        return [await verify_projection(conn, p) for p in chosen]

    results = _on_connection(data_dir, work)
    for result in results:
        _print_verification(result)
    if not all(r.identical for r in results):
        raise typer.Exit(1)
