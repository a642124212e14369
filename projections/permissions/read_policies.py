"""The read policies in force for a principal on a table (issue 33): its own and those of its roles."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from catalog_es.identifiers import name_key
from catalog_es.planning.policy import ReadPolicy
from catalog_es.privileges import user_principal
from catalog_es.store.database import Connection
from projections.permissions.queries import PRINCIPALS

# One indexed query each (loadTable asks on every request under the builtin authorizer): the principal's own and
# its roles' policies, the roles resolved in the same statement as every privilege check resolves them.
_FOR_TABLE = f"""
SELECT row_filter, columns FROM authz_read_policies
WHERE table_id = %(table)s AND principal IN ({PRINCIPALS}) ORDER BY principal"""
_IN_WAREHOUSE = f"""
SELECT EXISTS (
    SELECT 1 FROM authz_read_policies p JOIN authz_objects o ON o.id = p.table_id
    WHERE p.principal IN ({PRINCIPALS}) AND %(warehouse)s = ANY(o.ancestors))"""


def _params(user_id: str, roles: Sequence[str], **more: Any) -> dict[str, Any]:
    return {"user": user_principal(user_id), "token_roles": [name_key(role) for role in roles], **more}


async def read_policy_for(
    conn: Connection, table_id: uuid.UUID, user_id: str, roles: Sequence[str] = ()
) -> ReadPolicy | None:
    """The restrictive combination of every policy naming the user or a role it acts as; None: none does."""
    cursor = await conn.execute(_FOR_TABLE.encode(), _params(user_id, roles, table=table_id))
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
    cursor = await conn.execute(_IN_WAREHOUSE.encode(), _params(user_id, roles, warehouse=warehouse_id))
    row = await cursor.fetchone()
    return bool(row and row[0])
