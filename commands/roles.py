"""Role use cases: create, update, delete (membership is the `assignee` privilege on the role)."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchRoleError
from catalog_es.events.access import RoleCreated, RoleDeleted, RoleUpdated
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from catalog_es.store.streams import last_event
from commands.context import CommandContext


class CreateRole(msgspec.Struct, frozen=True):
    project_id: uuid.UUID
    name: str
    description: str | None
    metadata: EventMetadata


class UpdateRole(msgspec.Struct, frozen=True):
    role_id: uuid.UUID
    project_id: uuid.UUID
    name: str
    description: str | None
    metadata: EventMetadata


class DeleteRole(msgspec.Struct, frozen=True):
    role_id: uuid.UUID
    metadata: EventMetadata


def _stream(role_id: uuid.UUID) -> str:
    return f"role-{role_id}"


def _check_name(name: str) -> None:
    if not name.strip():
        raise BadRequestError("A role needs a name")


async def handle_create_role(cmd: CreateRole, ctx: CommandContext) -> uuid.UUID:
    """Raises: AlreadyExistsError when the project has a role of that name."""
    _check_name(cmd.name)
    role_id = ctx.ids.new_id()
    async with ctx.store.transaction(cmd.metadata) as tx:
        if await ctx.access.role_by_name(tx.conn, cmd.project_id, cmd.name) is not None:
            raise AlreadyExistsError(f"Role {cmd.name!r} already exists")
        event = RoleCreated(role_id=role_id, project_id=cmd.project_id, name=cmd.name, description=cmd.description)
        await tx.append(event, expected_version=0)
    return role_id


async def _existing_version(conn: Connection, role_id: uuid.UUID, version: int) -> int:
    current = await last_event(conn, _stream(role_id)) if version else None
    if current is None or isinstance(current, RoleDeleted):
        raise NoSuchRoleError(f"Role {role_id} does not exist")
    return version


async def handle_update_role(cmd: UpdateRole, ctx: CommandContext) -> None:
    """Raises: NoSuchRoleError, AlreadyExistsError (another role has the name)."""
    _check_name(cmd.name)
    async with ctx.store.transaction(cmd.metadata) as tx:
        version = await _existing_version(tx.conn, cmd.role_id, await tx.stream_version(_stream(cmd.role_id)))
        holder = await ctx.access.role_by_name(tx.conn, cmd.project_id, cmd.name)
        if holder is not None and holder != cmd.role_id:
            raise AlreadyExistsError(f"Role {cmd.name!r} already exists")
        await tx.append(
            RoleUpdated(role_id=cmd.role_id, name=cmd.name, description=cmd.description), expected_version=version
        )


async def handle_delete_role(cmd: DeleteRole, ctx: CommandContext) -> None:
    """Raises: NoSuchRoleError."""
    async with ctx.store.transaction(cmd.metadata) as tx:
        version = await _existing_version(tx.conn, cmd.role_id, await tx.stream_version(_stream(cmd.role_id)))
        await tx.append(RoleDeleted(role_id=cmd.role_id), expected_version=version)
