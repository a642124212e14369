"""The one name-taken path: tables and views share one name space per namespace, and a taken name is refused
with the kind that holds it, worded as Iceberg's reference catalogs word it (Java engines and users match on it)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from catalog_es.errors import AlreadyExistsError
from catalog_es.identifiers import Namespace
from catalog_es.store.database import Connection
from catalog_es.tabular_kind import TABLE, VIEW, TabularKind
from commands.context import CommandContext

# The refusal of a taken name: (namespace, name, the kind holding it) -> the error to raise.
NameTaken = Callable[[Namespace, str, TabularKind], AlreadyExistsError]


async def name_holder(
    ctx: CommandContext, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
) -> TabularKind:
    """Which kind holds a name known to be taken."""
    return VIEW if await VIEW.row(ctx.state, conn, warehouse_id, namespace, name) is not None else TABLE


async def require_name_free(
    ctx: CommandContext,
    conn: Connection,
    warehouse_id: uuid.UUID,
    namespace: Namespace,
    namespace_id: uuid.UUID,
    name: str,
    *,
    taken: NameTaken,
) -> None:
    """Raises: AlreadyExistsError, made by `taken`, when a table or a view holds the name (in any case)."""
    if await ctx.state.table_name_taken(conn, namespace_id, name):
        raise taken(namespace, name, await name_holder(ctx, conn, warehouse_id, namespace, name))


def rename_target_taken(source: Namespace, source_name: str) -> NameTaken:
    """Renaming a table or a view onto a taken name."""

    def refuse(destination: Namespace, destination_name: str, holder: TabularKind) -> AlreadyExistsError:
        return AlreadyExistsError(
            f"Cannot rename {source}.{source_name} to {destination}.{destination_name}. {holder.title} already exists"
        )

    return refuse


def undrop_target_taken(kind: TabularKind, tabular_id: uuid.UUID) -> NameTaken:
    """Undropping a table or a view under a name taken meanwhile."""

    def refuse(namespace: Namespace, name: str, holder: TabularKind) -> AlreadyExistsError:
        return AlreadyExistsError(
            f"Cannot undrop {kind.name} {tabular_id}: a {holder.name} named {namespace}.{name} exists;"
            ' pass a new "name" in the target'
        )

    return refuse
