"""View routes: list, create, load, exists, replace, drop, rename, register."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, head, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from api.auth.rules import requires
from api.catalog.listing import list_names
from api.catalog.paging import PageRequest
from api.catalog.rules import forcing, on_namespace, on_tabular, renamed
from api.catalog.wire import (
    CommitViewRequest,
    CreateViewRequest,
    ListTablesResponse,
    LoadViewResult,
    RegisterViewRequest,
    RenameTableRequest,
)
from api.dependencies import RequestScope, parse_namespace
from api.encoded_slash import decode_name
from catalog_es.errors import NoSuchViewError
from catalog_es.identifiers import Namespace
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.tabular_kind import VIEW
from commands.commit_view import CommitView, handle_commit_view
from commands.create_view import CreateView, handle_create_view
from commands.tabular_lifecycle import (
    DropView,
    RegisterView,
    RenameView,
    handle_drop_view,
    handle_register_view,
    handle_rename_view,
)
from commands.tabulars import TabularResult
from projections.catalog.queries import CatalogReadModel


async def _load(
    conn: Connection, read_model: CatalogReadModel, warehouse: WarehouseRow, namespace: str, view: str
) -> TabularRow:
    ident = parse_namespace(namespace)
    row = await read_model.view(conn, warehouse.id, ident, decode_name(view))
    if row is None:
        raise NoSuchViewError(f"View does not exist: {ident}.{decode_name(view)}")
    return row


def _result(result: TabularResult) -> LoadViewResult:
    return LoadViewResult(metadata_location=result.stored_location, metadata=result.metadata)


class ViewsController(Controller):
    path = "/{prefix:str}/namespaces/{namespace:str}"

    @get("/views", opt=requires(on_namespace(None)))
    async def list_views(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        conn: NamedDependency[Connection],
        page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
        page_size: Annotated[int | None, QueryParameter(name="pageSize")] = None,
    ) -> ListTablesResponse:
        page = PageRequest.parse(page_token, page_size)
        return await list_names(
            conn, req.read_model, req.warehouse, namespace, page, req.read_model.list_views, req.access, "views"
        )

    @post("/views", status_code=200, opt=requires(on_namespace("create")))
    async def create_view(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        data: JSONBody[CreateViewRequest],
    ) -> LoadViewResult:
        command = CreateView(
            warehouse_id=req.warehouse.id,
            namespace=parse_namespace(namespace),
            name=data.name,
            schema=data.schema,
            view_version=data.view_version,
            metadata=req.meta,
            location=data.location,
            properties=data.properties,
        )
        return _result(await handle_create_view(command, req.ctx))

    @get("/views/{view:str}", opt=requires(on_tabular("describe", VIEW)))
    async def load_view(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        view: FromPath[str],
        conn: NamedDependency[Connection],
    ) -> LoadViewResult:
        row = await _load(conn, req.read_model, req.warehouse, namespace, view)
        return LoadViewResult(metadata_location=row.metadata_location, metadata=row.metadata)

    @head("/views/{view:str}", status_code=204, opt=requires(on_tabular("describe", VIEW)))
    async def view_exists(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        view: FromPath[str],
        conn: NamedDependency[Connection],
    ) -> None:
        await _load(conn, req.read_model, req.warehouse, namespace, view)

    @post("/views/{view:str}", status_code=200, opt=requires(on_tabular("modify", VIEW)))
    async def replace_view(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        view: FromPath[str],
        data: JSONBody[CommitViewRequest],
    ) -> LoadViewResult:
        command = CommitView(
            req.warehouse.id,
            parse_namespace(namespace),
            decode_name(view),
            data.requirements,
            data.updates,
            req.meta,
        )
        return _result(await handle_commit_view(command, req.ctx))

    @delete("/views/{view:str}", status_code=204, opt=requires(forcing(on_tabular("modify", VIEW))))
    async def drop_view(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        view: FromPath[str],
        force: FromQuery[bool] = False,
    ) -> None:
        """A protected view answers 409 unless `force=true` (see `forcing`)."""
        command = DropView(req.warehouse.id, parse_namespace(namespace), decode_name(view), req.meta, force=force)
        await handle_drop_view(command, req.ctx)

    @post("/register-view", status_code=200, opt=requires(on_namespace("create")))
    async def register_view(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        data: JSONBody[RegisterViewRequest],
    ) -> LoadViewResult:
        command = RegisterView(
            req.warehouse.id, parse_namespace(namespace), data.name, data.metadata_location, req.meta
        )
        return _result(await handle_register_view(command, req.ctx))


@post("/{prefix:str}/views/rename", status_code=204, opt=requires(renamed(VIEW)))
async def rename_view(req: NamedDependency[RequestScope], data: JSONBody[RenameTableRequest]) -> None:
    command = RenameView(
        warehouse_id=req.warehouse.id,
        source_namespace=Namespace(tuple(data.source.namespace)),
        source_name=data.source.name,
        destination_namespace=Namespace(tuple(data.destination.namespace)),
        destination_name=data.destination.name,
        metadata=req.meta,
    )
    await handle_rename_view(command, req.ctx)
