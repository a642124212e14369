"""`catalog-es projector run|status`, `projections rebuild` and `audit verify`: the projections' operator commands."""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli.audit_chain import ExpectAccessHead, ExpectHead, check_chains, print_chain
from api.cli.session import (
    DataDir,
    HealthHost,
    HealthPort,
    cli_dsn,
    cli_settings,
    command_group,
    fail,
    on_connection,
    until_signalled,
)

if TYPE_CHECKING:
    from catalog_es.store.database import Connection
    from catalog_es.store.hash_chain import ChainReport
    from projections.registry import Projection
    from projections.verify import Verification

projector_cli = command_group("Run projector processes and show their checkpoints.")
projections_cli = command_group("Rebuild read models from the event log.")

Name = Annotated[str | None, typer.Argument(help="Projection name (see `catalog-es projector status`)")]
All = Annotated[bool, typer.Option("--all", help="Every projection")]


def _chosen(name: str | None, every: bool, candidates: tuple[Projection, ...]) -> tuple[Projection, ...]:
    from projections.registry import projection  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    if every == (name is not None):
        fail("give a projection NAME or --all", 2)
    if every:
        return candidates
    try:
        chosen = projection(name or "")
    except KeyError as exc:
        fail(str(exc.args[0]), 2)
    if chosen not in candidates:
        fail(f"{chosen.name} is projected inline by the API, not by a process", 2)
    return (chosen,)


@projector_cli.command("run")
def run(
    name: Name = None,
    every: All = False,
    data_dir: DataDir = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Events per transaction")] = 500,
    poll_seconds: Annotated[float, typer.Option(min=0.01, help="Poll interval when no NOTIFY arrives")] = 1.0,
    health_port: HealthPort = None,
    health_host: HealthHost = "127.0.0.1",
) -> None:
    """Follow the event log from the checkpoint and keep the read model(s) up to date (until stopped)."""
    from api.runtime.database import migrate  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.health_listener import with_health  # noqa: PLC0415
    from projections.registry import PROCESS_PROJECTIONS  # noqa: PLC0415
    from projections.runner import run_projectors  # noqa: PLC0415

    chosen = _chosen(name, every, PROCESS_PROJECTIONS)
    dsn = cli_dsn(cli_settings(data_dir))
    asyncio.run(migrate(dsn))
    projecting = run_projectors(dsn, chosen, batch_size=batch_size, poll_seconds=poll_seconds)
    asyncio.run(until_signalled(with_health(projecting, health_host, health_port)))


@projector_cli.command("status")
def status(data_dir: DataDir = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Each projector's checkpoint, the log head and the lag."""
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    from projections.registry import all_statuses  # noqa: PLC0415

    statuses = on_connection(cli_settings(data_dir), lambda conn: all_statuses(conn, datetime.now(UTC)))
    if as_json:
        sys.stdout.buffer.write(msgspec.json.encode(statuses) + b"\n")
        return

    table = Table("projector", "mode", "checkpoint", "head", "lag (events)", "lag (s)")
    for s in statuses:
        table.add_row(s.projector, s.mode, str(s.checkpoint), str(s.head), str(s.lag_positions), f"{s.lag_seconds:.1f}")
    Console().print(table)


@projections_cli.command("rebuild")
def rebuild(name: Name = None, every: All = False, data_dir: DataDir = None) -> None:
    """Replay the log into shadow tables, catch up with the live log, then swap them in atomically."""
    from rich.progress import (  # noqa: PLC0415 - the CLI imports lazily (fast --help)
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        Task,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text  # noqa: PLC0415

    from projections.rebuild import rebuild_projection  # noqa: PLC0415
    from projections.registry import PROJECTIONS  # noqa: PLC0415

    class _RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{task.speed or 0:,.0f} events/s")

    settings = cli_settings(data_dir)
    chosen = _chosen(name, every, tuple(p for p in PROJECTIONS if p.rebuildable or name is not None))
    if not all(p.rebuildable for p in chosen):
        fail(f"{name} is never rebuilt from the log (it would bless an altered log); check it with `audit verify`", 2)
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
        positions = on_connection(settings, work)
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


def audit_verify(
    name: Name = None,
    data_dir: DataDir = None,
    expect_head: ExpectHead = None,
    expect_access_head: ExpectAccessHead = None,
) -> None:
    """Check the hash chains over the event log and the access log (nothing altered or removed), then recompute
    every read model (or NAME) from the log and diff it with the live one; exit 1 on any problem."""
    from projections.registry import PROJECTIONS  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from projections.verify import verify_projection  # noqa: PLC0415

    settings = cli_settings(data_dir)
    chosen = _chosen(name, name is None, PROJECTIONS)

    async def work(conn: Connection) -> tuple[list[ChainReport], list[Verification]]:
        chains = await check_chains(conn, expect_head, expect_access_head) if name is None else []
        if not all(c.intact for c in chains):
            return chains, []  # replaying a broken log would only repeat what the chain found
        return chains, [await verify_projection(conn, p) for p in chosen]

    chains, results = on_connection(settings, work)
    for chain in chains:
        print_chain(chain)
    if not results and chains:
        typer.echo("read models not verified: the log itself is broken")
    for result in results:
        _print_verification(result)
    if not all(r.identical for r in results) or not all(c.intact for c in chains):
        raise typer.Exit(1)
