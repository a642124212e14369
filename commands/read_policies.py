"""Read policy use cases (issue 33): set or remove what rows and columns a principal may read of a table."""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events.access import ReadPolicyRemoved, ReadPolicySet
from catalog_es.planning.request import expression_json, parse_expression
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext


class SetReadPolicy(msgspec.Struct, frozen=True):
    table_id: uuid.UUID
    principal: str  # user:<id> | role:<uuid>
    row_filter: Any
    columns: list[str] | None
    metadata: EventMetadata


class RemoveReadPolicy(msgspec.Struct, frozen=True):
    table_id: uuid.UUID
    principal: str
    metadata: EventMetadata


def _check_principal(principal: str) -> None:
    kind, _, name = principal.partition(":")
    if kind not in ("user", "role") or not name:
        raise BadRequestError(f"A read policy names a user or a role, not {principal!r}")
    if kind == "role":
        try:
            uuid.UUID(name)
        except ValueError:
            raise BadRequestError(f"Not a role id: {name!r}") from None


async def handle_set_read_policy(cmd: SetReadPolicy, ctx: CommandContext) -> None:
    """Record the policy with its filter in pyiceberg's canonical JSON form (the same filter, one spelling).

    Raises: BadRequestError for a filter that is not an Iceberg expression, an empty or blank column list, or a
    malformed principal.
    """
    _check_principal(cmd.principal)
    row_filter = None if cmd.row_filter is None else expression_json(parse_expression(cmd.row_filter))
    if cmd.columns is not None and (not cmd.columns or any(not name.strip() for name in cmd.columns)):
        raise BadRequestError("`columns` lists at least one column (leave it out to allow every column)")
    if row_filter is None and cmd.columns is None:
        raise BadRequestError("A read policy restricts rows (`row-filter`), columns (`columns`) or both")
    event = ReadPolicySet(
        table_id=cmd.table_id,
        principal=cmd.principal,
        row_filter=row_filter,
        columns=None if cmd.columns is None else list(dict.fromkeys(cmd.columns)),
    )
    async with ctx.store.transaction(cmd.metadata) as tx:
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))


async def handle_remove_read_policy(cmd: RemoveReadPolicy, ctx: CommandContext) -> None:
    """Raises: BadRequestError for a malformed principal."""
    _check_principal(cmd.principal)
    event = ReadPolicyRemoved(table_id=cmd.table_id, principal=cmd.principal)
    async with ctx.store.transaction(cmd.metadata) as tx:
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))
