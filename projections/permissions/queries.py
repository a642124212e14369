"""Authorization checks and access-filtered listings: each one SQL statement on the permissions read model."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from catalog_es.identifiers import Namespace, name_key
from catalog_es.privileges import IMPLIED_BY, user_principal
from catalog_es.store.database import Connection

# The principals a user acts as: themselves, the roles their token names (the roles claim, matched by role name),
# and every role these reach through (nested) memberships.
PRINCIPALS = """
WITH base(principal) AS (
    SELECT %(user)s::text
    UNION ALL SELECT 'role:' || id::text FROM authz_roles WHERE name_key = ANY(%(token_roles)s::text[]))
SELECT principal FROM base
UNION SELECT c.principal FROM authz_principals c WHERE c.member IN (SELECT principal FROM base)"""

_CHECK = f"""
SELECT EXISTS (
    SELECT 1 FROM authz_objects o
    JOIN authz_grants g ON g.object_id = ANY(o.ancestors)
    JOIN authz_objects granted ON granted.id = g.object_id
    WHERE o.id = %(object)s AND g.principal IN ({PRINCIPALS})
      AND (g.privilege = ANY(%(implying)s)
           OR (%(ownership_grants)s AND g.privilege = 'ownership' AND NOT granted.managed))
)"""

# Something inside the container is granted to the user: the container is visible (Lakekeeper: can see a child).
_INSIDE = f"""
SELECT EXISTS (
    SELECT 1 FROM authz_grants g JOIN authz_objects d ON d.id = g.object_id
    WHERE g.principal IN ({PRINCIPALS}) AND d.kind <> 'role' AND %(object)s = ANY(d.ancestors)
)"""

# The listings get the principals as an array (not a subquery) so that the planner can estimate how many
# grants they hold, and start from those when they are few (a user allowed to see 1 % of a namespace).
_VISIBLE_CHILD_NAMESPACES = """
SELECT n.parts FROM namespaces n
WHERE n.warehouse_id = %(warehouse)s AND n.parent_key = %(parent_key)s AND n.key > %(after)s
  AND n.id IN (
    SELECT unnest(d.ancestors) FROM authz_grants g JOIN authz_objects d ON d.id = g.object_id
    WHERE g.principal = ANY(%(principals)s) AND d.kind <> 'role')
ORDER BY n.key LIMIT %(limit)s"""

# Inside a namespace the user cannot describe as a whole, only grants on the tabular itself can show it.
# Two plans, chosen by how many grants the caller holds (a planner estimate flips between them under LIMIT):
# few grants: start from them (cost ~ the caller's grants); many: walk the namespace in name order and probe.
_FEW_GRANTS = 1_000
_GRANT_COUNT = "SELECT count(*) FROM (SELECT 1 FROM authz_grants WHERE principal = ANY(%s) LIMIT %s) AS few"
_TABULARS_FROM_GRANTS = """
WITH granted AS MATERIALIZED (
    SELECT DISTINCT g.object_id FROM authz_grants g
    WHERE g.principal = ANY(%(principals)s) AND g.privilege = ANY(%(implying)s))
SELECT t.name FROM granted JOIN {relation} t ON t.id = granted.object_id
WHERE t.namespace_id = %(namespace)s AND t.name_key > %(after)s
ORDER BY t.name_key LIMIT %(limit)s"""
_TABULARS_BY_NAME = """
SELECT t.name FROM {relation} t
WHERE t.namespace_id = %(namespace)s AND t.name_key > %(after)s
  AND EXISTS (SELECT 1 FROM authz_grants g WHERE g.object_id = t.id AND g.principal = ANY(%(principals)s)
              AND g.privilege = ANY(%(implying)s))
ORDER BY t.name_key LIMIT %(limit)s"""


def _params(user_id: str, token_roles: Sequence[str] = (), **more: Any) -> dict[str, Any]:
    return {"user": user_principal(user_id), "token_roles": [name_key(role) for role in token_roles], **more}


async def _exists(conn: Connection, query: str, params: dict[str, Any]) -> bool:
    cursor = await conn.execute(query.encode(), params)
    row = await cursor.fetchone()
    return bool(row and row[0])


async def has_privilege(
    conn: Connection, user_id: str, object_id: uuid.UUID, privilege: str, token_roles: Sequence[str] = ()
) -> bool:
    """Whether the user holds `privilege` on the object, directly, through a role, or from an ancestor."""
    params = _params(
        user_id,
        token_roles,
        object=object_id,
        implying=list(IMPLIED_BY[privilege]),
        ownership_grants=privilege == "manage_grants",
    )
    return await _exists(conn, _CHECK, params)


async def can_see(conn: Connection, user_id: str, object_id: uuid.UUID, token_roles: Sequence[str] = ()) -> bool:
    """Describe on the object, or anything inside it granted (a container showing the way to its content)."""
    if await has_privilege(conn, user_id, object_id, "describe", token_roles):
        return True
    return await _exists(conn, _INSIDE, _params(user_id, token_roles, object=object_id))


async def user_principals(conn: Connection, user_id: str, token_roles: Sequence[str] = ()) -> list[str]:
    """`user:<id>` and every `role:<id>` the user acts as."""
    cursor = await conn.execute(PRINCIPALS.encode(), _params(user_id, token_roles))
    return [str(row[0]) for row in await cursor.fetchall()]


async def visible_child_namespaces(
    conn: Connection,
    user_id: str,
    warehouse_id: uuid.UUID,
    parent: Namespace | None,
    after: str,
    limit: int | None,
    token_roles: Sequence[str] = (),
) -> list[list[str]]:
    """Children of `parent` that hold something granted to the user (for a parent it cannot describe)."""
    parent_key = parent.key if parent else ""
    principals = await user_principals(conn, user_id, token_roles)
    params = {
        "principals": principals,
        "warehouse": warehouse_id,
        "parent_key": parent_key,
        "after": after,
        "limit": limit,
    }
    cursor = await conn.execute(_VISIBLE_CHILD_NAMESPACES.encode(), params)
    return [list(row[0]) for row in await cursor.fetchall()]


async def visible_tabular_names(
    conn: Connection,
    user_id: str,
    relation: str,
    namespace_id: uuid.UUID,
    after: str,
    limit: int | None,
    token_roles: Sequence[str] = (),
) -> list[str]:
    """Tables (`relation="tables"`) or views of a namespace the user may describe through their own grants."""
    if relation not in ("tables", "views"):
        raise ValueError(relation)
    params = {
        "principals": await user_principals(conn, user_id, token_roles),
        "namespace": namespace_id,
        "after": after,
        "limit": limit,
        "implying": list(IMPLIED_BY["describe"]),
    }
    cursor = await conn.execute(_GRANT_COUNT, (params["principals"], _FEW_GRANTS))
    row = await cursor.fetchone()
    few = row is not None and int(row[0]) < _FEW_GRANTS
    query = (_TABULARS_FROM_GRANTS if few else _TABULARS_BY_NAME).format(relation=relation)
    cursor = await conn.execute(query.encode(), params)
    return [str(row[0]) for row in await cursor.fetchall()]


class UserRow(msgspec.Struct, frozen=True):
    id: str
    name: str
    email: str | None
    user_type: str
    last_updated_with: str
    created_at: datetime
    updated_at: datetime | None


_USER = "SELECT id, name, email, user_type, last_updated_with, created_at, updated_at FROM authz_users"


async def user(conn: Connection, user_id: str) -> UserRow | None:
    cursor = await conn.execute(f"{_USER} WHERE id = %s".encode(), (user_id,))
    row = await cursor.fetchone()
    return UserRow(*row) if row else None


async def list_users(conn: Connection, after: str, limit: int, name: str | None = None) -> list[UserRow]:
    pattern = f"%{name}%" if name else "%"
    cursor = await conn.execute(
        f"{_USER} WHERE id > %s AND name ILIKE %s ORDER BY id LIMIT %s".encode(), (after, pattern, limit)
    )
    return [UserRow(*row) for row in await cursor.fetchall()]


class RoleRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    description: str | None
    created_at: datetime
    updated_at: datetime | None


_ROLE = "SELECT id, project_id, name, description, created_at, updated_at FROM authz_roles"


async def role(conn: Connection, role_id: uuid.UUID) -> RoleRow | None:
    cursor = await conn.execute(f"{_ROLE} WHERE id = %s".encode(), (role_id,))
    row = await cursor.fetchone()
    return RoleRow(*row) if row else None


async def role_by_name(conn: Connection, project_id: uuid.UUID, name_key: str) -> RoleRow | None:
    cursor = await conn.execute(f"{_ROLE} WHERE project_id = %s AND name_key = %s".encode(), (project_id, name_key))
    row = await cursor.fetchone()
    return RoleRow(*row) if row else None


async def list_roles(conn: Connection, project_id: uuid.UUID) -> list[RoleRow]:
    cursor = await conn.execute(f"{_ROLE} WHERE project_id = %s ORDER BY name_key".encode(), (project_id,))
    return [RoleRow(*row) for row in await cursor.fetchall()]


async def assignments(conn: Connection, object_id: uuid.UUID) -> list[tuple[str, str]]:
    """(principal, privilege) granted directly on the object."""
    cursor = await conn.execute(
        "SELECT principal, privilege FROM authz_grants WHERE object_id = %s ORDER BY privilege, principal",
        (object_id,),
    )
    return [(str(row[0]), str(row[1])) for row in await cursor.fetchall()]


async def effective_assignments(conn: Connection, object_id: uuid.UUID) -> list[tuple[str, str, str, uuid.UUID]]:
    """(principal, privilege, origin kind, origin id) granted on the object or any ancestor, nearest first."""
    cursor = await conn.execute(
        "SELECT g.principal, g.privilege, granted.kind, g.object_id FROM authz_objects o"
        " JOIN authz_grants g ON g.object_id = ANY(o.ancestors) JOIN authz_objects granted ON granted.id = g.object_id"
        " WHERE o.id = %s ORDER BY array_position(o.ancestors, g.object_id), g.privilege, g.principal",
        (object_id,),
    )
    return [(str(row[0]), str(row[1]), str(row[2]), row[3]) for row in await cursor.fetchall()]


async def object_kind(conn: Connection, object_id: uuid.UUID) -> str | None:
    cursor = await conn.execute("SELECT kind FROM authz_objects WHERE id = %s", (object_id,))
    row = await cursor.fetchone()
    return str(row[0]) if row else None


async def managed_access(conn: Connection, object_id: uuid.UUID) -> tuple[bool, bool]:
    """(set on the object itself, in force through an ancestor or itself)."""
    cursor = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM authz_managed_access WHERE id = %s), coalesce("
        "(SELECT managed FROM authz_objects WHERE id = %s), false)",
        (object_id, object_id),
    )
    row = await cursor.fetchone()
    return (bool(row[0]), bool(row[1])) if row else (False, False)


async def is_inside(conn: Connection, object_id: uuid.UUID, container_id: uuid.UUID) -> bool:
    """Whether the container is an ancestor of the object (a table or view of that warehouse, say)."""
    cursor = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM authz_objects WHERE id = %s AND %s = ANY(ancestors))", (object_id, container_id)
    )
    row = await cursor.fetchone()
    return bool(row and row[0])


class AccessReadModel:
    """`catalog_es.state.AccessState` over the permissions read model (the functions above)."""

    async def role_by_name(self, conn: Connection, project_id: uuid.UUID, name: str) -> uuid.UUID | None:
        row = await role_by_name(conn, project_id, name_key(name))
        return row.id if row else None

    async def assignments(self, conn: Connection, object_id: uuid.UUID) -> list[tuple[str, str]]:
        return await assignments(conn, object_id)

    async def user_exists(self, conn: Connection, user_id: str) -> bool:
        return await user(conn, user_id) is not None

    async def object_kind(self, conn: Connection, object_id: uuid.UUID) -> str | None:
        return await object_kind(conn, object_id)


class ServicePrincipalRow(msgspec.Struct, frozen=True):
    client_id: uuid.UUID
    user_id: str
    name: str
    key_version: int
    created_at: datetime
    updated_at: datetime | None
    revoked_at: datetime | None


_SERVICE_PRINCIPAL = (
    "SELECT client_id, user_id, name, key_version, created_at, updated_at, revoked_at FROM authz_service_principals"
)


async def service_principal(conn: Connection, client_id: uuid.UUID) -> ServicePrincipalRow | None:
    cursor = await conn.execute(f"{_SERVICE_PRINCIPAL} WHERE client_id = %s".encode(), (client_id,))
    row = await cursor.fetchone()
    return ServicePrincipalRow(*row) if row else None


async def list_service_principals(conn: Connection, *, include_revoked: bool = False) -> list[ServicePrincipalRow]:
    where = "" if include_revoked else " WHERE revoked_at IS NULL"
    cursor = await conn.execute(f"{_SERVICE_PRINCIPAL}{where} ORDER BY created_at, client_id".encode())
    return [ServicePrincipalRow(*row) for row in await cursor.fetchall()]


async def token_floors(conn: Connection) -> dict[uuid.UUID, int | None]:
    """Every service principal's lowest valid secret version (None: revoked), for the revocation list."""
    cursor = await conn.execute("SELECT client_id, key_version, revoked_at IS NOT NULL FROM authz_service_principals")
    return {row[0]: (None if row[2] else int(row[1])) for row in await cursor.fetchall()}
