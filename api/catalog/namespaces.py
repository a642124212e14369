"""Namespace routes: list, create, load, exists, drop, update properties."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, head, post
from litestar.datastructures import State
from litestar.params import Parameter

from api.auth.listing_filter import ListingAccess
from api.catalog.paging import PageRequest
from api.catalog.wire import (
    CreateNamespaceRequest,
    ListNamespacesResponse,
    NamespaceResponse,
    UpdateNamespacePropertiesRequest,
    UpdateNamespacePropertiesResponse,
)
from api.container import services
from api.dependencies import CATALOG_DEPENDENCIES, parse_namespace, parse_parent
from api.settings import Settings
from catalog_es.errors import NoSuchNamespaceError
from catalog_es.identifiers import Namespace
from catalog_es.state import NamespaceRow, WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.namespaces import (
    CreateNamespace,
    DropNamespace,
    UpdateNamespaceProperties,
    handle_create_namespace,
    handle_drop_namespace,
    handle_update_namespace_properties,
)
from projections.catalog.queries import CatalogReadModel


async def _load(
    conn: Connection, read_model: CatalogReadModel, warehouse: WarehouseRow, namespace: str
) -> NamespaceRow:
    ident = parse_namespace(namespace)
    row = await read_model.namespace(conn, warehouse.id, ident)
    if row is None:
        raise NoSuchNamespaceError(f"Namespace does not exist: {ident}")
    return row


class NamespacesController(Controller):
    path = "/catalog/v1/{prefix:str}/namespaces"
    dependencies = CATALOG_DEPENDENCIES

    @get("")
    async def list_namespaces(
        self,
        conn: Connection,
        read_model: CatalogReadModel,
        warehouse_row: WarehouseRow,
        access: ListingAccess,
        parent: str | None = None,
        page_token: Annotated[str | None, Parameter(query="pageToken")] = None,
        page_size: Annotated[int | None, Parameter(query="pageSize")] = None,
    ) -> ListNamespacesResponse:
        page = PageRequest.parse(page_token, page_size)
        parent_ns = parse_parent(parent) if parent else None
        parent_row = await read_model.namespace(conn, warehouse_row.id, parent_ns) if parent_ns else None
        if parent_ns is not None and parent_row is None:
            raise NoSuchNamespaceError(f"Namespace does not exist: {parent_ns}")
        container = parent_row.id if parent_row else warehouse_row.id
        rows = await access.namespaces(conn, read_model, warehouse_row.id, parent_ns, container, page.after, page.limit)
        namespaces, token = page.cut(rows, lambda parts: Namespace(tuple(parts)).key)
        return ListNamespacesResponse(namespaces=namespaces, next_page_token=token)

    @post("", status_code=200)
    async def create_namespace(
        self,
        data: CreateNamespaceRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
        state: State,
    ) -> NamespaceResponse:
        """Raises: BadRequestError (400) beyond `max_namespace_depth` levels."""
        settings: Settings = services(state).settings
        namespace = Namespace(tuple(data.namespace))
        command = CreateNamespace(warehouse_row.id, namespace, data.properties, meta, settings.max_namespace_depth)
        properties = await handle_create_namespace(command, ctx)
        return NamespaceResponse(namespace=list(namespace.parts), properties=properties)

    @get("/{namespace:str}")
    async def load_namespace(
        self, namespace: str, conn: Connection, read_model: CatalogReadModel, warehouse_row: WarehouseRow
    ) -> NamespaceResponse:
        row = await _load(conn, read_model, warehouse_row, namespace)
        return NamespaceResponse(namespace=row.parts, properties=row.properties)

    @head("/{namespace:str}", status_code=204)
    async def namespace_exists(
        self, namespace: str, conn: Connection, read_model: CatalogReadModel, warehouse_row: WarehouseRow
    ) -> None:
        await _load(conn, read_model, warehouse_row, namespace)

    @delete("/{namespace:str}", status_code=204)
    async def drop_namespace(
        self, namespace: str, ctx: CommandContext, warehouse_row: WarehouseRow, meta: EventMetadata
    ) -> None:
        await handle_drop_namespace(DropNamespace(warehouse_row.id, parse_namespace(namespace), meta), ctx)

    @post("/{namespace:str}/properties", status_code=200)
    async def update_properties(
        self,
        namespace: str,
        data: UpdateNamespacePropertiesRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
    ) -> UpdateNamespacePropertiesResponse:
        command = UpdateNamespaceProperties(
            warehouse_row.id, parse_namespace(namespace), data.updates, data.removals, meta
        )
        summary = await handle_update_namespace_properties(command, ctx)
        return UpdateNamespacePropertiesResponse(
            updated=summary.updated, removed=summary.removed, missing=summary.missing
        )
