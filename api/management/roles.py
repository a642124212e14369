"""Roles: create, list, get, update, delete in the `x-project-id` project (members: `assignee` assignments)."""

from __future__ import annotations

import uuid

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.authorizer import Authorizer
from api.auth.principal import Principal
from api.auth.rules import in_handler, requires
from api.container import services
from api.dependencies import RequestScope
from api.encoded_slash import decode_name
from api.management.access_checks import not_found, principal_of, require_principals_exist, visible_object
from api.management.wire import (
    Assignment,
    CreateRoleRequest,
    ListRolesResponse,
    Role,
    RoleMember,
    RoleMembers,
    UpdateRoleRequest,
)
from catalog_es.errors import BadRequestError, NoSuchProjectError, NotAuthorizedError
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.permissions import ChangeAssignments, handle_change_assignments
from commands.roles import (
    CreateRole,
    DeleteRole,
    UpdateRole,
    handle_create_role,
    handle_delete_role,
    handle_update_role,
)
from projections.permissions import queries as permissions_queries
from projections.permissions.queries import RoleRow


def _member(principal: str) -> RoleMember:
    kind, _, ident = principal.partition(":")
    return RoleMember(role=uuid.UUID(ident)) if kind == "role" else RoleMember(user=ident)


def _role(row: RoleRow) -> Role:
    return Role(
        id=row.id,
        name=row.name,
        description=row.description,
        project_id=row.project_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


async def _existing(conn: Connection, authz: Authorizer, principal: Principal, role_id: uuid.UUID) -> RoleRow:
    await visible_object(conn, authz, principal, "role", role_id)
    row = await permissions_queries.role(conn, role_id)
    if row is None:
        raise not_found("role", role_id)
    return row


async def _require_grants(conn: Connection, authz: Authorizer, principal: Principal, object_id: uuid.UUID) -> None:
    if not await authz.allowed(conn, principal, object_id, "manage_grants"):
        raise NotAuthorizedError("Managing roles needs manage_grants (security_admin or project_admin)")


class RolesController(Controller):
    path = "/role"

    @post("", status_code=201, operation_id="create_role", opt=requires(in_handler))
    async def create_role(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[CreateRoleRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> Role:
        """Raises: NoSuchProjectError, NotAuthorizedError, AlreadyExistsError."""
        project = data.project_id or req.project_id
        authz: Authorizer = services(state).authorizer
        if await permissions_queries.object_kind(conn, project) != "project":
            raise NoSuchProjectError(f"Project {project} does not exist")
        await authz.require_visible(
            conn, req.principal, project, NoSuchProjectError(f"Project {project} does not exist")
        )
        await _require_grants(conn, authz, req.principal, project)
        command = CreateRole(project_id=project, name=data.name, description=data.description, metadata=req.meta)
        role_id = await handle_create_role(command, req.ctx)
        return await self._get(conn, role_id)

    @get("", operation_id="list_roles", opt=requires(in_handler))
    async def list_roles(
        self, req: NamedDependency[RequestScope], conn: NamedDependency[Connection], state: State
    ) -> ListRolesResponse:
        authz: Authorizer = services(state).authorizer
        rows = await permissions_queries.list_roles(conn, req.project_id)
        return ListRolesResponse(roles=[_role(row) for row in rows if await authz.visible(conn, req.principal, row.id)])

    @get("/{role_id:uuid}", operation_id="get_role", opt=requires(in_handler))
    async def get_role(
        self,
        req: NamedDependency[RequestScope],
        role_id: FromPath[uuid.UUID],
        conn: NamedDependency[Connection],
        state: State,
    ) -> Role:
        return _role(await _existing(conn, services(state).authorizer, req.principal, role_id))

    @post("/{role_id:uuid}", status_code=200, operation_id="update_role", opt=requires(in_handler))
    async def update_role(
        self,
        req: NamedDependency[RequestScope],
        role_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateRoleRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> Role:
        row = await _existing(conn, services(state).authorizer, req.principal, role_id)
        await _require_grants(conn, services(state).authorizer, req.principal, role_id)
        command = UpdateRole(
            role_id=role_id,
            project_id=row.project_id,
            name=data.name,
            description=data.description,
            metadata=req.meta,
        )
        await handle_update_role(command, req.ctx)
        return await self._get(conn, role_id)

    @delete("/{role_id:uuid}", status_code=204, operation_id="delete_role", opt=requires(in_handler))
    async def delete_role(
        self,
        req: NamedDependency[RequestScope],
        role_id: FromPath[uuid.UUID],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        await _existing(conn, services(state).authorizer, req.principal, role_id)
        await _require_grants(conn, services(state).authorizer, req.principal, role_id)
        await handle_delete_role(DeleteRole(role_id=role_id, metadata=req.meta), req.ctx)

    @get("/{role_id:uuid}/members", operation_id="list_role_members", opt=requires(in_handler))
    async def list_members(
        self,
        req: NamedDependency[RequestScope],
        role_id: FromPath[uuid.UUID],
        conn: NamedDependency[Connection],
        state: State,
    ) -> RoleMembers:
        await _existing(conn, services(state).authorizer, req.principal, role_id)
        rows = await permissions_queries.assignments(conn, role_id)
        return RoleMembers(members=[_member(who) for who, what in rows if what == "assignee"])

    @post("/{role_id:uuid}/members", status_code=204, operation_id="add_role_members", opt=requires(in_handler))
    async def add_members(
        self,
        req: NamedDependency[RequestScope],
        role_id: FromPath[uuid.UUID],
        data: JSONBody[RoleMembers],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        """Add users and roles in one transaction. Raises: NoSuchRoleError, NoSuchUserError, NotAuthorizedError."""
        members = [principal_of(Assignment(type="assignee", user=m.user, role=m.role)) for m in data.members]
        await self._change(conn, req.ctx, state, req.principal, req.meta, role_id, writes=members, deletes=[])

    @delete(
        "/{role_id:uuid}/members/{member_type:str}/{member_id:str}",
        status_code=204,
        operation_id="remove_role_member",
        opt=requires(in_handler),
    )
    async def remove_member(
        self,
        req: NamedDependency[RequestScope],
        role_id: FromPath[uuid.UUID],
        member_type: FromPath[str],
        member_id: FromPath[str],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        """Idempotent. Raises: BadRequestError for a member type other than `user` or `role`."""
        if member_type not in ("user", "role"):
            raise BadRequestError("member_type is `user` or `role`")
        await self._change(
            conn,
            req.ctx,
            state,
            req.principal,
            req.meta,
            role_id,
            writes=[],
            deletes=[f"{member_type}:{decode_name(member_id)}"],
        )

    async def _change(
        self,
        conn: Connection,
        ctx: CommandContext,
        state: State,
        principal: Principal,
        meta: EventMetadata,
        role_id: uuid.UUID,
        *,
        writes: list[str],
        deletes: list[str],
    ) -> None:
        await _existing(conn, services(state).authorizer, principal, role_id)
        await _require_grants(conn, services(state).authorizer, principal, role_id)
        await require_principals_exist(conn, services(state).authorizer, principal, writes)
        command = ChangeAssignments(
            "role", role_id, [(m, "assignee") for m in writes], [(m, "assignee") for m in deletes], meta
        )
        await handle_change_assignments(command, ctx)

    async def _get(self, conn: Connection, role_id: uuid.UUID) -> Role:
        row = await permissions_queries.role(conn, role_id)
        if row is None:
            raise not_found("role", role_id)
        return _role(row)
