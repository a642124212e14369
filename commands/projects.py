"""Project use cases: create, rename, delete (only once it holds no warehouse)."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchProjectError, NotEmptyError
from catalog_es.events import ProjectCreated, ProjectDeleted, ProjectRenamed
from catalog_es.state import ProjectRow
from catalog_es.store.eventstore import EventMetadata, Transaction
from commands.context import CommandContext

MAX_NAME_LENGTH = 128


class CreateProject(msgspec.Struct, frozen=True):
    name: str
    metadata: EventMetadata
    project_id: uuid.UUID | None = None


class RenameProject(msgspec.Struct, frozen=True):
    project_id: uuid.UUID
    name: str
    metadata: EventMetadata


class DeleteProject(msgspec.Struct, frozen=True):
    project_id: uuid.UUID
    metadata: EventMetadata


def validate_display_name(name: str, what: str) -> str:
    """Raises: BadRequestError for an empty, padded, over-long or slash-containing name."""
    if not name or name.strip() != name:
        raise BadRequestError(f"{what} name must be non-empty without leading or trailing spaces")
    if len(name) > MAX_NAME_LENGTH or "/" in name:
        raise BadRequestError(f"{what} name must be at most {MAX_NAME_LENGTH} characters and contain no '/'")
    return name


async def existing_project(tx: Transaction, ctx: CommandContext, project_id: uuid.UUID) -> ProjectRow:
    """Raises: NoSuchProjectError."""
    row = await ctx.state.project(tx.conn, project_id)
    if row is None:
        raise NoSuchProjectError(f"Project {project_id} does not exist")
    return row


async def handle_create_project(cmd: CreateProject, ctx: CommandContext) -> uuid.UUID:
    """Raises: AlreadyExistsError when the id is (or was) taken."""
    name = validate_display_name(cmd.name, "Project")
    project_id = cmd.project_id or ctx.ids.new_id()
    async with ctx.store.transaction(cmd.metadata) as tx:
        if await tx.stream_version(f"project-{project_id}") != 0:
            raise AlreadyExistsError(f"Project id {project_id} is already in use")
        await tx.append(ProjectCreated(project_id=project_id, name=name), expected_version=0)
    return project_id


async def handle_rename_project(cmd: RenameProject, ctx: CommandContext) -> None:
    name = validate_display_name(cmd.name, "Project")
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await existing_project(tx, ctx, cmd.project_id)
        await tx.append(ProjectRenamed(project_id=row.id, name=name), expected_version=row.version)


async def handle_delete_project(cmd: DeleteProject, ctx: CommandContext) -> None:
    """Raises: NotEmptyError while the project has warehouses."""
    async with ctx.store.transaction(cmd.metadata) as tx:
        row = await existing_project(tx, ctx, cmd.project_id)
        if await ctx.state.warehouses_in_project(tx.conn, row.id):
            raise NotEmptyError(f"Project {row.id} still has warehouses; delete them first")
        await tx.append(ProjectDeleted(project_id=row.id), expected_version=row.version)
