"""Projects under /management/v1, the current one chosen by the `x-project-id` header."""

from __future__ import annotations

from litestar import delete, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from api.auth.rules import requires, server_operator
from api.dependencies import RequestScope
from api.management.rules import on_project
from api.management.wire import (
    CreateProjectRequest,
    CreateProjectResponse,
    GetProjectResponse,
    ListProjectsResponse,
    RenameRequest,
)
from catalog_es.errors import NoSuchProjectError
from catalog_es.store.database import Connection
from commands.projects import (
    CreateProject,
    DeleteProject,
    RenameProject,
    handle_create_project,
    handle_delete_project,
    handle_rename_project,
)


@post("/project", status_code=201, opt=requires(server_operator))
async def create_project(
    req: NamedDependency[RequestScope], data: JSONBody[CreateProjectRequest]
) -> CreateProjectResponse:
    project_id = await handle_create_project(CreateProject(data.project_name, req.meta, data.project_id), req.ctx)
    return CreateProjectResponse(project_id=project_id)


@get("/project-list", opt=requires(server_operator))
async def list_projects(req: NamedDependency[RequestScope], conn: NamedDependency[Connection]) -> ListProjectsResponse:
    projects = await req.read_model.list_projects(conn)
    return ListProjectsResponse(
        projects=[GetProjectResponse(project_id=row.id, project_name=row.name) for row in projects]
    )


@get("/project", opt=requires(on_project(None)))
async def get_project(req: NamedDependency[RequestScope], conn: NamedDependency[Connection]) -> GetProjectResponse:
    row = await req.read_model.project(conn, req.project_id)
    if row is None:
        raise NoSuchProjectError(f"Project {req.project_id} does not exist")
    return GetProjectResponse(project_id=row.id, project_name=row.name)


@post("/project/rename", status_code=204, opt=requires(on_project("project_admin")))
async def rename_project(req: NamedDependency[RequestScope], data: JSONBody[RenameRequest]) -> None:
    await handle_rename_project(RenameProject(req.project_id, data.new_name, req.meta), req.ctx)


@delete("/project", status_code=204, opt=requires(on_project("project_admin")))
async def delete_project(req: NamedDependency[RequestScope]) -> None:
    """Raises: NotEmptyError (409) while the project has warehouses."""
    await handle_delete_project(DeleteProject(req.project_id, req.meta), req.ctx)


PROJECT_ROUTES = [create_project, list_projects, get_project, rename_project, delete_project]
