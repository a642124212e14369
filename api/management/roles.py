"""Roles: create, list, get, update, delete in the `x-project-id` project (members: `assignee` assignments)."""

from __future__ import annotations

import uuid

from litestar import Controller, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.rules import filtered_listing, requires
from api.dependencies import RequestScope
from api.encoded_slash import decode_name
from api.management.access_checks import not_found, principal_of
from api.management.grant_rules import new_role_members, new_role_project, on_role
from api.management.wire import (
    Assignment,
    CreateRoleRequest,
    ListRolesResponse,
    Role,
    RoleMember,
    RoleMembers,
    UpdateRoleRequest,
)
from catalog_es.errors import BadRequestError
from catalog_es.store.database import Connection
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


class RolesController(Controller):
    path = "/role"

    @post("", status_code=201, operation_id="create_role", opt=requires(new_role_project))
    async def create_role(self, req: NamedDependency[RequestScope], data: JSONBody[CreateRoleRequest]) -> Role:
        """In the body's project, else the header's. Raises: AlreadyExistsError."""
        project = data.project_id or req.project_id
        command = CreateRole(project_id=project, name=data.name, description=data.description, metadata=req.meta)
        role_id = await handle_create_role(command, req.ctx)
        return await _get(req, role_id)

    @get("", operation_id="list_roles", opt=requires(filtered_listing))
    async def list_roles(
        self, req: NamedDependency[RequestScope], conn: NamedDependency[Connection]
    ) -> ListRolesResponse:
        """The project's roles the caller may see."""
        rows = await permissions_queries.list_roles(conn, req.project_id)
        return ListRolesResponse(roles=[_role(row) for row in rows if await req.access.sees(conn, row.id)])

    @get("/{role_id:uuid}", operation_id="get_role", opt=requires(on_role(manage=False)))
    async def get_role(self, role_id: FromPath[uuid.UUID], conn: NamedDependency[Connection]) -> Role:
        return _role(await _row(conn, role_id))

    @post("/{role_id:uuid}", status_code=200, operation_id="update_role", opt=requires(on_role(manage=True)))
    async def update_role(
        self, req: NamedDependency[RequestScope], role_id: FromPath[uuid.UUID], data: JSONBody[UpdateRoleRequest]
    ) -> Role:
        async with req.ctx.store.connection() as conn:  # released before the command takes its own
            row = await _row(conn, role_id)
        command = UpdateRole(
            role_id=role_id,
            project_id=row.project_id,
            name=data.name,
            description=data.description,
            metadata=req.meta,
        )
        await handle_update_role(command, req.ctx)
        return await _get(req, role_id)

    @delete("/{role_id:uuid}", status_code=204, operation_id="delete_role", opt=requires(on_role(manage=True)))
    async def delete_role(self, req: NamedDependency[RequestScope], role_id: FromPath[uuid.UUID]) -> None:
        await handle_delete_role(DeleteRole(role_id=role_id, metadata=req.meta), req.ctx)

    @get("/{role_id:uuid}/members", operation_id="list_role_members", opt=requires(on_role(manage=False)))
    async def list_members(self, role_id: FromPath[uuid.UUID], conn: NamedDependency[Connection]) -> RoleMembers:
        rows = await permissions_queries.assignments(conn, role_id)
        return RoleMembers(members=[_member(who) for who, what in rows if what == "assignee"])

    @post("/{role_id:uuid}/members", status_code=204, operation_id="add_role_members", opt=requires(new_role_members))
    async def add_members(
        self, req: NamedDependency[RequestScope], role_id: FromPath[uuid.UUID], data: JSONBody[RoleMembers]
    ) -> None:
        """Add users and roles in one transaction (each one's existence checked by the rule)."""
        members = [principal_of(Assignment(type="assignee", user=m.user, role=m.role)) for m in data.members]
        await _change(req, role_id, writes=members, deletes=[])

    @delete(
        "/{role_id:uuid}/members/{member_type:str}/{member_id:str}",
        status_code=204,
        operation_id="remove_role_member",
        opt=requires(on_role(manage=True)),
    )
    async def remove_member(
        self,
        req: NamedDependency[RequestScope],
        role_id: FromPath[uuid.UUID],
        member_type: FromPath[str],
        member_id: FromPath[str],
    ) -> None:
        """Idempotent. Raises: BadRequestError for a member type other than `user` or `role`."""
        if member_type not in ("user", "role"):
            raise BadRequestError("member_type is `user` or `role`")
        await _change(req, role_id, writes=[], deletes=[f"{member_type}:{decode_name(member_id)}"])


async def _change(req: RequestScope, role_id: uuid.UUID, *, writes: list[str], deletes: list[str]) -> None:
    assignee = [(m, "assignee") for m in writes], [(m, "assignee") for m in deletes]
    await handle_change_assignments(ChangeAssignments("role", role_id, *assignee, req.meta), req.ctx)


async def _row(conn: Connection, role_id: uuid.UUID) -> RoleRow:
    """The role the rule found visible. Raises: NoSuchRoleError when it is gone since."""
    row = await permissions_queries.role(conn, role_id)
    if row is None:
        raise not_found("role", role_id)
    return row


async def _get(req: RequestScope, role_id: uuid.UUID) -> Role:
    async with req.ctx.store.connection() as conn:  # taken after the command's own: one at a time
        return _role(await _row(conn, role_id))
