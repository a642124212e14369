"""The permissions projector: users, roles, the object hierarchy, grants and role closure from the log.

It runs inline (in the append transaction): a creator must own what they just created on the next request,
and a revocation must hold for the very next request. Rebuild and `audit access --as-of` replay the same code.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from functools import singledispatch

from psycopg.types.json import Jsonb

from catalog_es.events import (
    Event,
    NamespaceCreated,
    NamespaceDropped,
    ProjectCreated,
    ProjectDeleted,
    ServerBootstrapped,
    TableCreated,
    TableDropped,
    TableRegistered,
    TableRenamed,
    ViewCreated,
    ViewDropped,
    ViewRegistered,
    ViewRenamed,
    WarehouseCreated,
    WarehouseDeleted,
)
from catalog_es.events.access import (
    ManagedAccessSet,
    PrivilegeGranted,
    PrivilegeRevoked,
    ReadPolicyRemoved,
    ReadPolicySet,
    RoleCreated,
    RoleDeleted,
    RoleUpdated,
    ServicePrincipalCreated,
    ServicePrincipalRevoked,
    ServicePrincipalSecretRotated,
    UserCreated,
    UserDeleted,
    UserUpdated,
)
from catalog_es.events.lifecycle import NamespaceExpired, TableExpired, ViewExpired
from catalog_es.identifiers import Namespace, name_key
from catalog_es.privileges import SERVER_OBJECT_ID, role_principal, user_principal
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import RecordedEvent
from catalog_es.store.migrations import Migration, packaged_sql
from catalog_es.tabular_kind import kind_of
from projections.topics import dispatched

PERMISSION_TABLES = (
    "authz_users",
    "authz_roles",
    "authz_objects",
    "authz_managed_access",
    "authz_grants",
    "authz_principals",
    "authz_read_policies",
    "authz_service_principals",
)
# Actors that are not users: nobody becomes owner through them.
_NOT_USERS = frozenset({"anonymous", "system"})

_CLOSURE = """
INSERT INTO authz_principals (member, principal)
WITH RECURSIVE reach(member, role_id) AS (
    SELECT g.principal, g.object_id FROM authz_grants g WHERE g.privilege = 'assignee'
  UNION
    SELECT r.member, g.object_id FROM reach r
    JOIN authz_grants g ON g.principal = 'role:' || r.role_id::text AND g.privilege = 'assignee'
)
SELECT DISTINCT member, 'role:' || role_id::text FROM reach
"""


async def project_permissions(conn: Connection, events: Sequence[RecordedEvent]) -> None:
    """Apply events in order; the same function serves requests, rebuilds and point-in-time replays."""
    for recorded in events:
        await _apply(recorded.decode(), conn, recorded)


@singledispatch
async def _apply(event: Event, conn: Connection, recorded: RecordedEvent) -> None:
    return  # commits, property changes, storage changes: nothing to do with access


def _actor(recorded: RecordedEvent) -> str | None:
    actor = recorded.extensions.get("actor")
    return str(actor) if actor and actor not in _NOT_USERS else None


async def _add_object(
    conn: Connection,
    object_id: uuid.UUID,
    kind: str,
    parent_id: uuid.UUID,
    *,
    warehouse_id: uuid.UUID | None = None,
    ns_key: str | None = None,
) -> bool:
    """Add the object under its parent; False when it was there already (a register with overwrite)."""
    cursor = await conn.execute(
        "INSERT INTO authz_objects (id, kind, parent_id, ancestors, managed, warehouse_id, ns_key)"
        " SELECT %s, %s, p.id, %s || p.ancestors, p.managed, %s, %s FROM authz_objects p WHERE p.id = %s"
        " ON CONFLICT (id) DO NOTHING RETURNING id",
        (object_id, kind, [object_id], warehouse_id, ns_key, parent_id),
    )
    return await cursor.fetchone() is not None  # (rowcount is not reliable after the store's executemany)


async def _own(conn: Connection, object_id: uuid.UUID, recorded: RecordedEvent, privilege: str = "ownership") -> None:
    actor = _actor(recorded)
    if actor is not None:
        await conn.execute(
            "INSERT INTO authz_grants (object_id, principal, privilege) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (object_id, user_principal(actor), privilege),
        )


async def _remove_object(conn: Connection, object_id: uuid.UUID) -> None:
    """An object and its grants (descendants are gone already: containers must be empty to be dropped)."""
    await conn.execute("DELETE FROM authz_grants WHERE object_id = %s", (object_id,))
    await conn.execute("DELETE FROM authz_read_policies WHERE table_id = %s", (object_id,))
    await conn.execute("DELETE FROM authz_managed_access WHERE id = %s", (object_id,))
    await conn.execute("DELETE FROM authz_objects WHERE id = %s", (object_id,))


async def _recompute_closure(conn: Connection) -> None:
    await conn.execute("DELETE FROM authz_principals")
    await conn.execute(_CLOSURE)


@_apply.register
async def _(event: ServerBootstrapped, conn: Connection, recorded: RecordedEvent) -> None:
    await _own(conn, SERVER_OBJECT_ID, recorded, "operator" if event.is_operator else "admin")
    actor = _actor(recorded)
    if actor is not None and (event.user_name or event.user_email or event.user_type):
        await conn.execute(  # the bootstrap body describes the first admin (who was provisioned on arrival)
            "UPDATE authz_users SET name = coalesce(%s, name), email = coalesce(%s, email),"
            " user_type = coalesce(%s, user_type) WHERE id = %s",
            (event.user_name, event.user_email, event.user_type, actor),
        )


@_apply.register
async def _(event: ProjectCreated, conn: Connection, recorded: RecordedEvent) -> None:
    await _add_object(conn, event.project_id, "project", SERVER_OBJECT_ID)
    await _own(conn, event.project_id, recorded, "project_admin")


@_apply.register
async def _(event: ProjectDeleted, conn: Connection, recorded: RecordedEvent) -> None:
    await _remove_object(conn, event.project_id)


@_apply.register
async def _(event: WarehouseCreated, conn: Connection, recorded: RecordedEvent) -> None:
    await _add_object(conn, event.warehouse_id, "warehouse", event.project_id)
    await _own(conn, event.warehouse_id, recorded)


@_apply.register
async def _(event: WarehouseDeleted, conn: Connection, recorded: RecordedEvent) -> None:
    await _remove_object(conn, event.warehouse_id)


@_apply.register
async def _(event: NamespaceCreated, conn: Connection, recorded: RecordedEvent) -> None:
    namespace = Namespace(tuple(event.namespace))
    parent_id = event.warehouse_id
    if namespace.parent is not None:
        cursor = await conn.execute(
            "SELECT id FROM authz_objects WHERE warehouse_id = %s AND ns_key = %s",
            (event.warehouse_id, namespace.parent.key),
        )
        row = await cursor.fetchone()
        parent_id = row[0] if row else parent_id
    await _add_object(
        conn, event.namespace_id, "namespace", parent_id, warehouse_id=event.warehouse_id, ns_key=namespace.key
    )
    await _own(conn, event.namespace_id, recorded)


@_apply.register
async def _(event: NamespaceDropped, conn: Connection, recorded: RecordedEvent) -> None:
    await _remove_object(conn, event.namespace_id)


@_apply.register(TableCreated)
@_apply.register(TableRegistered)
@_apply.register(ViewCreated)
@_apply.register(ViewRegistered)
async def _(
    event: TableCreated | TableRegistered | ViewCreated | ViewRegistered, conn: Connection, recorded: RecordedEvent
) -> None:
    if await _add_object(conn, event.entity_id, kind_of(event).name, event.namespace_id):
        await _own(conn, event.entity_id, recorded)  # replacing a registered table's pointer makes no new owner


@_apply.register(TableRenamed)
@_apply.register(ViewRenamed)
async def _(event: TableRenamed | ViewRenamed, conn: Connection, recorded: RecordedEvent) -> None:
    """Re-parent: the old namespace's inherited grants stay behind (Lakekeeper #2000), direct grants travel along."""
    await conn.execute(
        "UPDATE authz_objects o SET parent_id = p.id, ancestors = ARRAY[o.id] || p.ancestors, managed = p.managed"
        " FROM authz_objects p WHERE p.id = %s AND o.id = %s",
        (event.namespace_id, event.entity_id),
    )


@_apply.register(TableDropped)
@_apply.register(ViewDropped)
async def _(event: TableDropped | ViewDropped, conn: Connection, recorded: RecordedEvent) -> None:
    await _remove_object(conn, event.entity_id)


# A soft drop keeps the object and its grants (an undrop restores them); it goes when the drop expires.
@_apply.register(TableExpired)
@_apply.register(ViewExpired)
@_apply.register(NamespaceExpired)
async def _(event: TableExpired | ViewExpired | NamespaceExpired, conn: Connection, recorded: RecordedEvent) -> None:
    await _remove_object(conn, event.entity_id)


@_apply.register
async def _(event: UserCreated, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "INSERT INTO authz_users (id, name, email, user_type, last_updated_with, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET name = excluded.name,"
        " email = excluded.email, user_type = excluded.user_type, last_updated_with = excluded.last_updated_with,"
        " updated_at = excluded.created_at",
        (event.user_id, event.name, event.email, event.user_type, event.last_updated_with, recorded.time),
    )


@_apply.register
async def _(event: UserUpdated, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE authz_users SET name = %s, email = %s, user_type = %s, last_updated_with = %s, updated_at = %s"
        " WHERE id = %s",
        (event.name, event.email, event.user_type, event.last_updated_with, recorded.time, event.user_id),
    )


@_apply.register
async def _(event: UserDeleted, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute("DELETE FROM authz_users WHERE id = %s", (event.user_id,))
    await conn.execute("DELETE FROM authz_grants WHERE principal = %s", (user_principal(event.user_id),))
    await conn.execute("DELETE FROM authz_read_policies WHERE principal = %s", (user_principal(event.user_id),))
    await conn.execute("DELETE FROM authz_principals WHERE member = %s", (user_principal(event.user_id),))


@_apply.register
async def _(event: ServicePrincipalCreated, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "INSERT INTO authz_service_principals (client_id, user_id, name, key_version, created_at)"
        " VALUES (%s, %s, %s, %s, %s)",
        (event.client_id, event.user_id, event.name, event.key_version, recorded.time),
    )


@_apply.register
async def _(event: ServicePrincipalSecretRotated, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE authz_service_principals SET key_version = %s, updated_at = %s WHERE client_id = %s",
        (event.key_version, recorded.time, event.client_id),
    )


@_apply.register
async def _(event: ServicePrincipalRevoked, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE authz_service_principals SET revoked_at = %s, updated_at = %s WHERE client_id = %s",
        (recorded.time, recorded.time, event.client_id),
    )


@_apply.register
async def _(event: RoleCreated, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "INSERT INTO authz_roles (id, project_id, name, name_key, description, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (event.role_id, event.project_id, event.name, name_key(event.name), event.description, recorded.time),
    )
    await _add_object(conn, event.role_id, "role", event.project_id)
    await _own(conn, event.role_id, recorded)


@_apply.register
async def _(event: RoleUpdated, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "UPDATE authz_roles SET name = %s, name_key = %s, description = %s, updated_at = %s WHERE id = %s",
        (event.name, name_key(event.name), event.description, recorded.time, event.role_id),
    )


@_apply.register
async def _(event: RoleDeleted, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute("DELETE FROM authz_roles WHERE id = %s", (event.role_id,))
    await conn.execute("DELETE FROM authz_grants WHERE principal = %s", (role_principal(event.role_id),))
    await conn.execute("DELETE FROM authz_read_policies WHERE principal = %s", (role_principal(event.role_id),))
    await _remove_object(conn, event.role_id)
    await _recompute_closure(conn)


@_apply.register
async def _(event: PrivilegeGranted, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "INSERT INTO authz_grants (object_id, principal, privilege) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        (event.object_id, event.principal, event.privilege),
    )
    if event.privilege == "assignee":
        await _recompute_closure(conn)


@_apply.register
async def _(event: PrivilegeRevoked, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "DELETE FROM authz_grants WHERE object_id = %s AND principal = %s AND privilege = %s",
        (event.object_id, event.principal, event.privilege),
    )
    if event.privilege == "assignee":
        await _recompute_closure(conn)


@_apply.register
async def _(event: ManagedAccessSet, conn: Connection, recorded: RecordedEvent) -> None:
    if event.enabled:
        await conn.execute(
            "INSERT INTO authz_managed_access (id) VALUES (%s) ON CONFLICT DO NOTHING", (event.object_id,)
        )
    else:
        await conn.execute("DELETE FROM authz_managed_access WHERE id = %s", (event.object_id,))
    await conn.execute(
        "UPDATE authz_objects o SET managed = EXISTS"
        " (SELECT 1 FROM authz_managed_access m WHERE m.id = ANY(o.ancestors)) WHERE %s = ANY(o.ancestors)",
        (event.object_id,),
    )


@_apply.register
async def _(event: ReadPolicySet, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "INSERT INTO authz_read_policies (table_id, principal, row_filter, columns) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (table_id, principal) DO UPDATE SET row_filter = EXCLUDED.row_filter, columns = EXCLUDED.columns",
        (event.table_id, event.principal, None if event.row_filter is None else Jsonb(event.row_filter), event.columns),
    )


@_apply.register
async def _(event: ReadPolicyRemoved, conn: Connection, recorded: RecordedEvent) -> None:
    await conn.execute(
        "DELETE FROM authz_read_policies WHERE table_id = %s AND principal = %s", (event.table_id, event.principal)
    )


PERMISSION_MIGRATIONS = (
    Migration("0701_permissions_read_model", packaged_sql("projections.permissions", "permissions.sql")),
    Migration("0702_read_policies", packaged_sql("projections.permissions", "read_policies.sql")),
    Migration(
        "0703_service_principals",
        """
        -- Service principals as the log describes them (no secret, no hash: see service_principal_secrets).
        CREATE TABLE authz_service_principals (
            client_id uuid PRIMARY KEY,
            user_id text NOT NULL,
            name text NOT NULL,
            key_version integer NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz,
            revoked_at timestamptz
        );
        """,
    ),
)


# What this projector takes from the log: the events it has a function for (its fallback does nothing).
PERMISSION_TOPICS = dispatched(_apply)
