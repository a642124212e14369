"""View routes: list, create, load, exists, replace, drop, rename, register."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, head, post
from litestar.params import Parameter

from api.auth.listing_filter import ListingAccess
from api.catalog.listing import list_names
from api.catalog.paging import PageRequest
from api.catalog.wire import (
    CommitViewRequest,
    CreateViewRequest,
    ListTablesResponse,
    LoadViewResult,
    RegisterViewRequest,
    RenameTableRequest,
)
from api.dependencies import CATALOG_DEPENDENCIES, parse_namespace
from api.encoded_slash import decode_name
from catalog_es.errors import NoSuchViewError
from catalog_es.identifiers import Namespace
from catalog_es.state import ViewRow, WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.commit_view import CommitView, handle_commit_view
from commands.context import CommandContext
from commands.create_view import CreateView, handle_create_view
from commands.view_lifecycle import (
    DropView,
    RegisterView,
    RenameView,
    handle_drop_view,
    handle_register_view,
    handle_rename_view,
)
from commands.view_writes import ViewResult
from projections.catalog.queries import CatalogReadModel


async def _load(
    conn: Connection, read_model: CatalogReadModel, warehouse: WarehouseRow, namespace: str, view: str
) -> ViewRow:
    ident = parse_namespace(namespace)
    row = await read_model.view(conn, warehouse.id, ident, decode_name(view))
    if row is None:
        raise NoSuchViewError(f"View does not exist: {ident}.{decode_name(view)}")
    return row


def _result(result: ViewResult) -> LoadViewResult:
    return LoadViewResult(metadata_location=result.metadata_location, metadata=result.metadata)


class ViewsController(Controller):
    path = "/catalog/v1/{prefix:str}/namespaces/{namespace:str}"
    dependencies = CATALOG_DEPENDENCIES

    @get("/views")
    async def list_views(
        self,
        namespace: str,
        conn: Connection,
        read_model: CatalogReadModel,
        warehouse_row: WarehouseRow,
        access: ListingAccess,
        page_token: Annotated[str | None, Parameter(query="pageToken")] = None,
        page_size: Annotated[int | None, Parameter(query="pageSize")] = None,
    ) -> ListTablesResponse:
        page = PageRequest.parse(page_token, page_size)
        return await list_names(
            conn, read_model, warehouse_row, namespace, page, read_model.list_views, access, "views"
        )

    @post("/views", status_code=200)
    async def create_view(
        self,
        namespace: str,
        data: CreateViewRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
    ) -> LoadViewResult:
        command = CreateView(
            warehouse_id=warehouse_row.id,
            namespace=parse_namespace(namespace),
            name=data.name,
            schema=data.schema,
            view_version=data.view_version,
            metadata=meta,
            location=data.location,
            properties=data.properties,
        )
        return _result(await handle_create_view(command, ctx))

    @get("/views/{view:str}")
    async def load_view(
        self, namespace: str, view: str, conn: Connection, read_model: CatalogReadModel, warehouse_row: WarehouseRow
    ) -> LoadViewResult:
        row = await _load(conn, read_model, warehouse_row, namespace, view)
        return LoadViewResult(metadata_location=row.metadata_location, metadata=row.metadata)

    @head("/views/{view:str}", status_code=204)
    async def view_exists(
        self, namespace: str, view: str, conn: Connection, read_model: CatalogReadModel, warehouse_row: WarehouseRow
    ) -> None:
        await _load(conn, read_model, warehouse_row, namespace, view)

    @post("/views/{view:str}", status_code=200)
    async def replace_view(
        self,
        namespace: str,
        view: str,
        data: CommitViewRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
    ) -> LoadViewResult:
        command = CommitView(
            warehouse_row.id, parse_namespace(namespace), decode_name(view), data.requirements, data.updates, meta
        )
        return _result(await handle_commit_view(command, ctx))

    @delete("/views/{view:str}", status_code=204)
    async def drop_view(
        self, namespace: str, view: str, ctx: CommandContext, warehouse_row: WarehouseRow, meta: EventMetadata
    ) -> None:
        await handle_drop_view(DropView(warehouse_row.id, parse_namespace(namespace), decode_name(view), meta), ctx)

    @post("/register-view", status_code=200)
    async def register_view(
        self,
        namespace: str,
        data: RegisterViewRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
    ) -> LoadViewResult:
        command = RegisterView(warehouse_row.id, parse_namespace(namespace), data.name, data.metadata_location, meta)
        return _result(await handle_register_view(command, ctx))


@post("/catalog/v1/{prefix:str}/views/rename", status_code=204)
async def rename_view(
    data: RenameTableRequest, ctx: CommandContext, warehouse_row: WarehouseRow, meta: EventMetadata
) -> None:
    command = RenameView(
        warehouse_id=warehouse_row.id,
        source_namespace=Namespace(tuple(data.source.namespace)),
        source_name=data.source.name,
        destination_namespace=Namespace(tuple(data.destination.namespace)),
        destination_name=data.destination.name,
        metadata=meta,
    )
    await handle_rename_view(command, ctx)
