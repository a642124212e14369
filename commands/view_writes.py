"""Shared steps of view writes: the result shape and the claim on a name in the shared table/view name space."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import AlreadyExistsError, NoSuchViewError
from catalog_es.events import Json
from catalog_es.identifiers import Namespace
from catalog_es.store.database import Connection
from commands.context import CommandContext
from commands.name_conflicts import name_holder, view_name_taken


class ViewResult(msgspec.Struct, frozen=True):
    """What a client gets back: the view metadata and where it is stored."""

    metadata_location: str
    metadata: Json


def missing_view(namespace: Namespace, name: str) -> NoSuchViewError:
    return NoSuchViewError(f"View does not exist: {namespace}.{name}")


async def claim_view_name(
    ctx: CommandContext,
    conn: Connection,
    *,
    warehouse_id: uuid.UUID,
    namespace: Namespace,
    namespace_id: uuid.UUID,
    name: str,
    view_id: uuid.UUID,
) -> None:
    """Check that a new view's name and id are free.

    Raises:
        AlreadyExistsError: a table or view by that name (any case), or a view with that id, exists.
    """
    # Tables and views share one name space per namespace (spec: createView 409).
    if await ctx.state.table_name_taken(conn, namespace_id, name):
        raise view_name_taken(namespace, name, await name_holder(ctx, conn, warehouse_id, namespace, name))
    if await ctx.state.view_id_taken(conn, view_id):
        raise AlreadyExistsError(f"A view with uuid {view_id} already exists")
