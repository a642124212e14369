"""The hash-chain half of `catalog-es audit verify`: recompute both chains, print their heads, compare an anchor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.session import fail

if TYPE_CHECKING:
    from catalog_es.store.database import Connection
    from catalog_es.store.hash_chain import ChainReport

ExpectHead = Annotated[
    str | None,
    typer.Option(
        "--expect-head",
        help="POSITION:SHA256 printed by an earlier run: fail unless the event chain still holds that link",
    ),
]


def _anchor(value: str) -> tuple[int, bytes]:
    position, _, digest = value.partition(":")
    try:
        return int(position), bytes.fromhex(digest)
    except ValueError:
        fail(f"--expect-head wants POSITION:SHA256 (hex), not {value!r}", 2)


async def check_chains(conn: Connection, expect_head: str | None) -> list[ChainReport]:
    """Both chains verified; an anchor that no longer matches is reported as a problem of the event chain."""
    from catalog_es.store.hash_chain import verify_access_chain, verify_event_chain  # noqa: PLC0415

    events = await verify_event_chain(conn)
    if expect_head is not None:
        position, digest = _anchor(expect_head)
        cursor = await conn.execute("SELECT digest FROM catalog_event_chain WHERE global_position = %s", (position,))
        row = await cursor.fetchone()
        if row is None or bytes(row[0]) != digest:
            events.problems.append(f"the chain no longer holds the recorded link at {position}: it was recomputed")
    return [events, await verify_access_chain(conn)]


def print_chain(report: ChainReport) -> None:
    verdict = "intact" if report.intact else "BROKEN"
    head = f"{report.head_position}:{report.head.hex()}"
    typer.echo(f"{report.chain} hash chain: {verdict}, {report.checked} linked, head {head}")
    if report.unchained:
        typer.echo(f"  {report.unchained} not linked (events newer than the chain, or records older than it)")
    for problem in report.problems:
        typer.echo(f"  {problem}")
