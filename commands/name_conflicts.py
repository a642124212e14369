"""Already-exists errors worded as Iceberg's reference catalogs word them: Java engines and users match on them."""

from __future__ import annotations

import uuid
from typing import Literal

from catalog_es.errors import AlreadyExistsError
from catalog_es.identifiers import Namespace
from catalog_es.store.database import Connection
from commands.context import CommandContext

Holder = Literal["table", "view"]


async def name_holder(
    ctx: CommandContext, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
) -> Holder:
    """Which kind holds a name known to be taken (tables and views share one name space per namespace)."""
    return "view" if await ctx.state.view(conn, warehouse_id, namespace, name) is not None else "table"


def table_name_taken(namespace: Namespace, name: str, holder: Holder) -> AlreadyExistsError:
    """Creating a table under a taken name."""
    if holder == "view":
        return AlreadyExistsError(f"View with same name already exists: {namespace}.{name}")
    return AlreadyExistsError(f"Table already exists: {namespace}.{name}")


def view_name_taken(namespace: Namespace, name: str, holder: Holder) -> AlreadyExistsError:
    """Creating a view under a taken name."""
    if holder == "table":
        return AlreadyExistsError(f"Table with same name already exists: {namespace}.{name}")
    return AlreadyExistsError(f"View already exists: {namespace}.{name}")


def rename_target_taken(
    source: Namespace, source_name: str, destination: Namespace, destination_name: str, holder: Holder
) -> AlreadyExistsError:
    """Renaming a table or a view onto a taken name."""
    kind = "View" if holder == "view" else "Table"
    return AlreadyExistsError(
        f"Cannot rename {source}.{source_name} to {destination}.{destination_name}. {kind} already exists"
    )
