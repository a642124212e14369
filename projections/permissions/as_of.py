"""Who held which privilege on an object at a past instant, and which events granted it: the permissions
projector replayed up to that instant into a scratch schema (rolled back), then explained from the log."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec

from catalog_es.events import PrivilegeGranted, ServerBootstrapped
from catalog_es.privileges import IMPLIED_BY, PRIVILEGES, SERVER_OBJECT_ID
from catalog_es.store.database import Connection
from projections.audit.as_of import position_at
from projections.permissions.queries import PRINCIPALS, has_privilege
from projections.registry import PERMISSIONS
from projections.replay import replay, scratch_schema


class GrantingEvent(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    id: uuid.UUID
    position: int
    time: datetime
    type: str
    actor: str | None


class Reason(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """A grant that contributes: `privilege` held by `principal` on the object or an ancestor of it."""

    privilege: str
    principal: str
    object_kind: str
    object_id: uuid.UUID
    event: GrantingEvent | None


class UserAccess(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    user: str
    privileges: list[str]
    because: list[Reason]


class AccessAsOf(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    time: datetime
    position: int
    object_kind: str | None  # None: the object did not exist at that time
    object_id: uuid.UUID
    access: list[UserAccess]


async def access_as_of(conn: Connection, object_id: uuid.UUID, at: datetime, user: str | None = None) -> AccessAsOf:
    """Replay identity and grant events up to `at`; the live read model is not touched."""
    async with conn.transaction(force_rollback=True):
        position = await position_at(conn, at)
        async with scratch_schema(conn, PERMISSIONS, purpose="access_as_of", unique=True):
            await replay(conn, PERMISSIONS.project, position, types=PERMISSIONS.types)
            kind = await _kind(conn, object_id)
            access: list[UserAccess] = []
            if kind is not None:
                for user_id in [user] if user else await _users(conn):
                    held = [p for p in PRIVILEGES[kind] if await has_privilege(conn, user_id, object_id, p)]  # type: ignore[index]
                    if held:
                        reasons = await _reasons(conn, user_id, object_id, held, position)
                        access.append(UserAccess(user=user_id, privileges=held, because=reasons))
        return AccessAsOf(time=at, position=position, object_kind=kind, object_id=object_id, access=access)


async def _kind(conn: Connection, object_id: uuid.UUID) -> str | None:
    cursor = await conn.execute("SELECT kind FROM authz_objects WHERE id = %s", (object_id,))
    row = await cursor.fetchone()
    return str(row[0]) if row else None


async def _users(conn: Connection) -> list[str]:
    """Every user named by a grant or membership, and every provisioned one."""
    cursor = await conn.execute(
        "SELECT id FROM authz_users UNION SELECT substr(principal, 6) FROM authz_grants"
        " WHERE principal LIKE 'user:%%' ORDER BY 1"
    )
    return [str(row[0]) for row in await cursor.fetchall()]


async def _reasons(
    conn: Connection, user_id: str, object_id: uuid.UUID, held: list[str], position: int
) -> list[Reason]:
    implying = sorted({granted for privilege in held for granted in IMPLIED_BY[privilege]})
    cursor = await conn.execute(
        "SELECT g.privilege, g.principal, granted.kind, g.object_id FROM authz_objects o"
        " JOIN authz_grants g ON g.object_id = ANY(o.ancestors) JOIN authz_objects granted ON granted.id = g.object_id"
        f" WHERE o.id = %(object)s AND g.privilege = ANY(%(implying)s) AND g.principal IN ({PRINCIPALS})"
        " ORDER BY array_position(o.ancestors, g.object_id), g.privilege",
        {"object": object_id, "implying": implying, "user": f"user:{user_id}", "token_roles": []},
    )
    return [
        Reason(
            privilege=row[0],
            principal=row[1],
            object_kind=row[2],
            object_id=row[3],
            event=await _granting_event(conn, row[3], row[1], row[0], position),
        )
        for row in await cursor.fetchall()
    ]


async def _granting_event(
    conn: Connection, object_id: uuid.UUID, principal: str, privilege: str, position: int
) -> GrantingEvent | None:
    """The last explicit grant at or before `position`, else the event that created the object (its creator owns it)
    or, for the server, the bootstrap."""
    params: dict[str, Any] = {
        "stream": f"acl-{object_id}",
        "principal": principal,
        "privilege": privilege,
        "position": position,
        "object": str(object_id),
        "server": object_id == SERVER_OBJECT_ID,
        "granted": PrivilegeGranted.type_name,
        "bootstrapped": ServerBootstrapped.type_name,
    }
    for query in (
        "SELECT id, global_position, time, type, extensions->>'actor' FROM catalog_events"
        " WHERE stream_id = %(stream)s AND type = %(granted)s"
        " AND data->>'principal' = %(principal)s AND data->>'privilege' = %(privilege)s"
        " AND global_position <= %(position)s ORDER BY global_position DESC LIMIT 1",
        "SELECT id, global_position, time, type, extensions->>'actor' FROM catalog_events"
        " WHERE (stream_id LIKE '%%-' || %(object)s AND stream_version = 1"
        " OR %(server)s AND type = %(bootstrapped)s)"
        " AND 'user:' || (extensions->>'actor') = %(principal)s AND global_position <= %(position)s"
        " ORDER BY global_position LIMIT 1",
    ):
        cursor = await conn.execute(query.encode(), params)
        row = await cursor.fetchone()
        if row is not None:
            return GrantingEvent(id=row[0], position=row[1], time=row[2], type=row[3], actor=row[4])
    return None
