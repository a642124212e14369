"""Namespace routes: list, create, load, exists, drop, update properties."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, head, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from api.auth.rules import requires
from api.catalog.paging import PageRequest
from api.catalog.rules import forcing, listed_parent, new_namespace_parent, on_namespace
from api.catalog.wire import (
    CreateNamespaceRequest,
    ListNamespacesResponse,
    NamespaceResponse,
    UpdateNamespacePropertiesRequest,
    UpdateNamespacePropertiesResponse,
)
from api.container import services
from api.dependencies import RequestScope, parse_namespace, parse_parent
from api.settings import Settings
from catalog_es.errors import NoSuchNamespaceError
from catalog_es.identifiers import Namespace
from catalog_es.state import NamespaceRow, WarehouseRow
from catalog_es.store.database import Connection
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
    path = "/{prefix:str}/namespaces"

    @get("", opt=requires(listed_parent))
    async def list_namespaces(
        self,
        req: NamedDependency[RequestScope],
        conn: NamedDependency[Connection],
        parent: FromQuery[str | None] = None,
        page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
        page_size: Annotated[int | None, QueryParameter(name="pageSize")] = None,
    ) -> ListNamespacesResponse:
        page = PageRequest.parse(page_token, page_size)
        parent_ns = parse_parent(parent) if parent else None
        parent_row = await req.read_model.namespace(conn, req.warehouse.id, parent_ns) if parent_ns else None
        if parent_ns is not None and parent_row is None:
            raise NoSuchNamespaceError(f"Namespace does not exist: {parent_ns}")
        container = parent_row.id if parent_row else req.warehouse.id
        rows = await req.access.namespaces(
            conn, req.read_model, req.warehouse.id, parent_ns, container, page.after, page.limit
        )
        namespaces, token = page.cut(rows, lambda parts: Namespace(tuple(parts)).key)
        return ListNamespacesResponse(namespaces=namespaces, next_page_token=token)

    @post("", status_code=200, opt=requires(new_namespace_parent))
    async def create_namespace(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[CreateNamespaceRequest],
        state: State,
    ) -> NamespaceResponse:
        """Raises: BadRequestError (400) beyond `max_namespace_depth` levels."""
        settings: Settings = services(state).settings
        namespace = Namespace(tuple(data.namespace))
        command = CreateNamespace(req.warehouse.id, namespace, data.properties, req.meta, settings.max_namespace_depth)
        properties = await handle_create_namespace(command, req.ctx)
        return NamespaceResponse(namespace=list(namespace.parts), properties=properties)

    @get("/{namespace:str}", opt=requires(on_namespace(None)))
    async def load_namespace(
        self, req: NamedDependency[RequestScope], namespace: FromPath[str], conn: NamedDependency[Connection]
    ) -> NamespaceResponse:
        row = await _load(conn, req.read_model, req.warehouse, namespace)
        return NamespaceResponse(namespace=row.parts, properties=row.properties)

    @head("/{namespace:str}", status_code=204, opt=requires(on_namespace(None)))
    async def namespace_exists(
        self, req: NamedDependency[RequestScope], namespace: FromPath[str], conn: NamedDependency[Connection]
    ) -> None:
        await _load(conn, req.read_model, req.warehouse, namespace)

    @delete("/{namespace:str}", status_code=204, opt=requires(forcing(on_namespace("modify"))))
    async def drop_namespace(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        recursive: Annotated[bool, QueryParameter()] = False,
        purge_requested: Annotated[bool, QueryParameter(name="purgeRequested")] = False,
        force: FromQuery[bool] = False,
    ) -> None:
        """`recursive=true` drops everything inside too (Lakekeeper's extension); on a soft-delete warehouse the
        whole tree is hidden and can be undropped (`deleted-tabulars/undrop` with a `namespace` target). A
        namespace that is (or holds anything) protected answers 409 unless `force=true` (see `forcing`)."""
        command = DropNamespace(
            req.warehouse.id,
            parse_namespace(namespace),
            req.meta,
            recursive=recursive,
            purge_requested=purge_requested,
            force=force,
        )
        await handle_drop_namespace(command, req.ctx)

    @post("/{namespace:str}/properties", status_code=200, opt=requires(on_namespace("modify")))
    async def update_properties(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        data: JSONBody[UpdateNamespacePropertiesRequest],
    ) -> UpdateNamespacePropertiesResponse:
        command = UpdateNamespaceProperties(
            req.warehouse.id, parse_namespace(namespace), data.updates, data.removals, req.meta
        )
        summary = await handle_update_namespace_properties(command, req.ctx)
        return UpdateNamespacePropertiesResponse(
            updated=summary.updated, removed=summary.removed, missing=summary.missing
        )
