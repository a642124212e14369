"""Who may call the users, roles and permissions routes: rules on the object each acts on, from its path or body.

The object is the path's (a role, an object's assignments), the caller's own record, or the body's target (a
new user, a new role's project, the grantees of a change); a body is read as the handler will see it
(`read_body`). A hidden object answers exactly as a missing one; a visible one without the privilege, 403.
"""

from __future__ import annotations

import uuid
from typing import Any

from litestar.connection import ASGIConnection

from api.auth.rules import Check, Rule, read_body
from api.container import services
from api.encoded_slash import decode_name
from api.management.access_checks import (
    path_object,
    principal_of,
    read_policy_principal,
    require_may_change,
    require_may_read,
    require_principals_exist,
    visible_object,
)
from api.management.rules import read_policy_manager
from api.management.wire import (
    Assignment,
    BatchCheckRequest,
    CheckRequest,
    CreateRoleRequest,
    CreateUserRequest,
    ReadPolicyRequest,
    RoleMembers,
    UpdateAssignmentsRequest,
)
from api.project_header import project_id_of
from catalog_es.errors import BadRequestError, NoSuchProjectError, NotAuthorizedError
from catalog_es.privileges import SERVER_OBJECT_ID
from projections.permissions import queries as permissions_queries

HttpConnection = ASGIConnection[Any, Any, Any, Any]


# Users: the caller's own record, or a server role (Lakekeeper's `can_list_users` on the server to read others;
# managing another user, a server admin). Project admins, even security admins, see no other tenant's users.


async def _self_or_server(check: Check, user_id: str | None, privilege: str, message: str) -> None:
    if user_id != check.principal.user_id and not await check.authz.allowed(
        check.conn, check.principal, SERVER_OBJECT_ID, privilege
    ):
        raise NotAuthorizedError(message)


_MANAGE_USERS = "Only a server admin may manage other users"
_READ_USERS = "Only a server admin or operator may read other users"


async def user_lister(check: Check, params: dict[str, Any], _: HttpConnection) -> None:
    """Listing users (names, e-mails of the whole server): a server admin or operator."""
    await _self_or_server(check, None, "operator", _READ_USERS)


async def user_reader(check: Check, params: dict[str, Any], _: HttpConnection) -> None:
    """`{user_id}` itself, or a server admin or operator."""
    await _self_or_server(check, decode_name(str(params["user_id"])), "operator", _READ_USERS)


async def user_manager(check: Check, params: dict[str, Any], _: HttpConnection) -> None:
    """`{user_id}` itself, or a server admin."""
    await _self_or_server(check, decode_name(str(params["user_id"])), "admin", _MANAGE_USERS)


async def new_user(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    """Provisioning the caller (no `id` in the body, or its own), or another user as a server admin."""
    request = await read_body(connection, CreateUserRequest)
    await _self_or_server(check, request.id or check.principal.user_id, "admin", _MANAGE_USERS)


# Roles: visible to read; `manage_grants` on the role (security or project admin) to change it or its members.

_MANAGE_ROLES = "Managing roles needs manage_grants (security_admin or project_admin)"


async def _role(check: Check, role_id: uuid.UUID, manage: bool) -> None:
    await visible_object(check.conn, check.authz, check.principal, "role", role_id)
    if manage and not await check.authz.allowed(check.conn, check.principal, role_id, "manage_grants"):
        raise NotAuthorizedError(_MANAGE_ROLES)


def on_role(*, manage: bool) -> Rule:
    """The role `{role_id}`: visible, and with `manage` also `manage_grants` on it."""

    async def rule(check: Check, params: dict[str, Any], _: HttpConnection) -> None:
        await _role(check, params["role_id"], manage)

    return rule


async def new_role_members(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    """Managing the role, and every member named exists and is visible (another project's role answers missing)."""
    request = await read_body(connection, RoleMembers)
    members = [principal_of(Assignment(type="assignee", user=m.user, role=m.role)) for m in request.members]
    await _role(check, params["role_id"], manage=True)
    await require_principals_exist(check.conn, check.authz, check.principal, members)


async def new_role_project(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    """`manage_grants` on the project the role is created in: the body's `project-id`, else the header's."""
    request = await read_body(connection, CreateRoleRequest)
    project = request.project_id or project_id_of(connection, services(connection.app.state).settings)
    missing = NoSuchProjectError(f"Project {project} does not exist")
    if await permissions_queries.object_kind(check.conn, project) != "project":
        raise missing
    await check.authz.require_visible(check.conn, check.principal, project, missing)
    if not await check.authz.allowed(check.conn, check.principal, project, "manage_grants"):
        raise NotAuthorizedError(_MANAGE_ROLES)


# Assignments: the path's object (server, header project, or `{object_id}` in its warehouse), visible; reading
# them needs manage_grants or pass_grants on it, changing them what `require_may_change` says.


async def _visible_path_object(check: Check, connection: HttpConnection) -> uuid.UUID:
    target = path_object(connection)
    if target.kind != "server":
        await visible_object(
            check.conn, check.authz, check.principal, target.kind, target.object_id, target.container_id
        )
    return target.object_id


async def grants_reader(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    """Reading an object's assignments (own or effective): visible, and manage_grants or pass_grants on it."""
    object_id = await _visible_path_object(check, connection)
    await require_may_read(check.conn, check.authz, check.principal, object_id)


async def grants_changer(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    """Changing an object's assignments: visible, allowed to grant what the body names, grantees visible."""
    request = await read_body(connection, UpdateAssignmentsRequest)
    object_id = await _visible_path_object(check, connection)
    writes = [(principal_of(a), a.type) for a in request.writes]
    deletes = [(principal_of(a), a.type) for a in request.deletes]
    await require_may_change(check.conn, check.authz, check.principal, object_id, {p for _, p in writes + deletes})
    await require_principals_exist(check.conn, check.authz, check.principal, [who for who, _ in writes])


def managed_access(*, change: bool) -> Rule:
    """A warehouse's or namespace's managed-access flag: visible to read; setting it needs manage_grants."""

    async def rule(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
        object_id = await _visible_path_object(check, connection)
        if change and not await check.authz.allowed(check.conn, check.principal, object_id, "manage_grants"):
            raise NotAuthorizedError("Setting managed access needs manage_grants")

    return rule


async def _may_ask(check: Check, request: CheckRequest) -> None:
    """The object must be what the request says it is, and visible; asking about another user, manage_grants."""
    object_id = checked_object(request)
    if request.object_type != "server":
        await visible_object(check.conn, check.authz, check.principal, request.object_type, object_id)
    another = request.user is not None and request.user != check.principal.user_id
    if another and not await check.authz.allowed(check.conn, check.principal, object_id, "manage_grants"):
        raise NotAuthorizedError("Checking another user's access needs manage_grants on the object")


def checked_object(request: CheckRequest) -> uuid.UUID:
    """Raises: BadRequestError without an `object-id` for anything but the server."""
    if request.object_type == "server":
        return SERVER_OBJECT_ID
    if request.object_id is None:
        raise BadRequestError("object-id is required except for the server")
    return request.object_id


async def check_asker(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    await _may_ask(check, await read_body(connection, CheckRequest))


async def batch_check_asker(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    for request in (await read_body(connection, BatchCheckRequest)).checks:
        await _may_ask(check, request)


async def read_policy_setter(check: Check, params: dict[str, Any], connection: HttpConnection) -> None:
    """Setting a read policy: `read_policy_manager` on the table, and the principal it names exists, visible."""
    await read_policy_manager(check, params, connection)
    request = await read_body(connection, ReadPolicyRequest)
    principal = read_policy_principal(request.user, request.role)
    await require_principals_exist(check.conn, check.authz, check.principal, [principal])
