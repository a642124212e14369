"""The read policies in force for a principal on a table (issue 33): its own and those of its roles."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from catalog_es.planning.policy import ReadPolicy
from catalog_es.store.database import Connection
from projections.permissions.queries import user_principals


async def read_policy_for(
    conn: Connection, table_id: uuid.UUID, user_id: str, roles: Sequence[str] = ()
) -> ReadPolicy | None:
    """The restrictive combination of every policy naming the user or a role it acts as; None: none does."""
    principals = await user_principals(conn, user_id, roles)
    cursor = await conn.execute(
        "SELECT row_filter, columns FROM authz_read_policies WHERE table_id = %s AND principal = ANY(%s)"
        " ORDER BY principal",
        (table_id, principals),
    )
    return ReadPolicy.combined([(row[0], row[1]) for row in await cursor.fetchall()])


async def policies_on(conn: Connection, table_id: uuid.UUID) -> list[dict[str, Any]]:
    """Every read policy on the table, for its managers: principal, row filter JSON, columns."""
    cursor = await conn.execute(
        "SELECT principal, row_filter, columns FROM authz_read_policies WHERE table_id = %s ORDER BY principal",
        (table_id,),
    )
    return [{"principal": row[0], "row-filter": row[1], "columns": row[2]} for row in await cursor.fetchall()]


async def has_read_policy_in(
    conn: Connection, warehouse_id: uuid.UUID, user_id: str, roles: Sequence[str] = ()
) -> bool:
    """Whether any table of the warehouse has a policy for this principal (then /config tells it to plan here)."""
    principals = await user_principals(conn, user_id, roles)
    cursor = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM authz_read_policies p JOIN authz_objects o ON o.id = p.table_id"
        " WHERE p.principal = ANY(%s) AND %s = ANY(o.ancestors))",
        (principals, warehouse_id),
    )
    row = await cursor.fetchone()
    return bool(row and row[0])
