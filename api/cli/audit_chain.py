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


ExpectAccessHead = Annotated[
    str | None,
    typer.Option(
        "--expect-access-head",
        help="ID:SHA256 printed by an earlier run: fail unless the access-log chain still holds that link",
    ),
]
_LINK_AT = {
    "catalog_events": "SELECT digest FROM catalog_event_chain WHERE global_position = %s",
    "access_audit_log": "SELECT digest FROM access_audit_log WHERE id = %s",
}


def _anchor(value: str, option: str) -> tuple[int, bytes]:
    position, _, digest = value.partition(":")
    try:
        return int(position), bytes.fromhex(digest)
    except ValueError:
        fail(f"{option} wants POSITION:SHA256 (hex), not {value!r}", 2)


async def _check_anchor(conn: Connection, report: ChainReport, anchor: tuple[int, bytes]) -> None:
    """A recorded link must still be there, unchanged: else the chain was recomputed or cut back past it."""
    position, digest = anchor
    cursor = await conn.execute(_LINK_AT[report.chain].encode(), (position,))
    row = await cursor.fetchone()
    if row is None or row[0] is None or bytes(row[0]) != digest:
        report.problems.append(
            f"the chain no longer holds the recorded link at {position}: it was recomputed, or cut back past it"
        )


async def check_chains(
    conn: Connection, expect_head: str | None, expect_access_head: str | None = None
) -> list[ChainReport]:
    """Both chains verified; an anchor that no longer matches is reported as a problem of its chain."""
    from catalog_es.store.hash_chain import verify_access_chain, verify_event_chain  # noqa: PLC0415

    events, access = await verify_event_chain(conn), await verify_access_chain(conn)
    if expect_head is not None:
        await _check_anchor(conn, events, _anchor(expect_head, "--expect-head"))
    if expect_access_head is not None:
        await _check_anchor(conn, access, _anchor(expect_access_head, "--expect-access-head"))
    return [events, access]


def print_chain(report: ChainReport) -> None:
    verdict = "intact" if report.intact else "BROKEN"
    head = f"{report.head_position}:{report.head.hex()}"
    typer.echo(f"{report.chain} hash chain: {verdict}, {report.checked} linked, head {head}")
    if report.unchained:
        typer.echo(f"  {report.unchained} not linked (events newer than the chain, or records older than it)")
    for problem in report.problems:
        typer.echo(f"  {problem}")
