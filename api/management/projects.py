"""Projects under /management/v1, the current one chosen by the `x-project-id` header."""

from __future__ import annotations

import uuid

from litestar import delete, get, post

from api.management.wire import (
    CreateProjectRequest,
    CreateProjectResponse,
    GetProjectResponse,
    ListProjectsResponse,
    RenameRequest,
)
from catalog_es.errors import NoSuchProjectError
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.projects import (
    CreateProject,
    DeleteProject,
    RenameProject,
    handle_create_project,
    handle_delete_project,
    handle_rename_project,
)
from projections.catalog.queries import CatalogReadModel


@post("/management/v1/project", status_code=201)
async def create_project(data: CreateProjectRequest, ctx: CommandContext, meta: EventMetadata) -> CreateProjectResponse:
    project_id = await handle_create_project(CreateProject(data.project_name, meta, data.project_id), ctx)
    return CreateProjectResponse(project_id=project_id)


@get("/management/v1/project-list")
async def list_projects(conn: Connection, read_model: CatalogReadModel) -> ListProjectsResponse:
    projects = await read_model.list_projects(conn)
    return ListProjectsResponse(
        projects=[GetProjectResponse(project_id=row.id, project_name=row.name) for row in projects]
    )


@get("/management/v1/project")
async def get_project(project_id: uuid.UUID, conn: Connection, read_model: CatalogReadModel) -> GetProjectResponse:
    row = await read_model.project(conn, project_id)
    if row is None:
        raise NoSuchProjectError(f"Project {project_id} does not exist")
    return GetProjectResponse(project_id=row.id, project_name=row.name)


@post("/management/v1/project/rename", status_code=204)
async def rename_project(project_id: uuid.UUID, data: RenameRequest, ctx: CommandContext, meta: EventMetadata) -> None:
    await handle_rename_project(RenameProject(project_id, data.new_name, meta), ctx)


@delete("/management/v1/project", status_code=204)
async def delete_project(project_id: uuid.UUID, ctx: CommandContext, meta: EventMetadata) -> None:
    """Raises: NotEmptyError (409) while the project has warehouses."""
    await handle_delete_project(DeleteProject(project_id, meta), ctx)


PROJECT_ROUTES = [create_project, list_projects, get_project, rename_project, delete_project]
