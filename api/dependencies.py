"""Request-scoped dependencies: the command context, a read connection, the warehouse, who is asking."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import unquote

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import Provide

from api.auth.listing_filter import ListingAccess
from api.auth.principal import Principal, request_principal
from api.container import services
from api.encoded_slash import decode_name
from api.settings import Settings
from catalog_es.errors import BadRequestError, NoSuchWarehouseError
from catalog_es.identifiers import NIL_PROJECT_ID, Namespace
from catalog_es.state import WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext, require_active
from projections.catalog.queries import CatalogReadModel
from projections.catalog.warehouse_cache import WarehouseCache

# Litestar resolves the dependencies of one level of the dependency graph concurrently, one anyio task
# each, which cost a fifth of a catalog request's CPU and most of its latency tail under load
# (litestar-org/litestar#4563). So dependencies form chains, each taking the one before it, and every
# level holds one dependency: app-wide ctx, read_model, principal, meta, access, warehouse_row; on the
# catalog controllers the shorter ctx, read_model, warehouse_row, then conn or meta, and access after
# conn. A parameter named after its predecessor and not used otherwise is there for that order only.


def provide_ctx(state: State) -> CommandContext:
    ctx: CommandContext = services(state).ctx
    return ctx


def provide_read_model(ctx: CommandContext, state: State) -> CatalogReadModel:
    read_model: CatalogReadModel = services(state).read_model
    return read_model


async def provide_conn(state: State) -> AsyncGenerator[Connection, None]:
    async with services(state).ctx.store.connection() as conn:
        yield conn


async def provide_warehouse_conn(warehouse_row: WarehouseRow, state: State) -> AsyncGenerator[Connection, None]:
    """`conn` on the catalog routes: taken after the warehouse is known."""
    async with services(state).ctx.store.connection() as conn:
        yield conn


async def provide_warehouse(prefix: str, access: ListingAccess, state: State) -> WarehouseRow:
    return await _warehouse(prefix, state)


async def provide_catalog_warehouse(prefix: str, read_model: CatalogReadModel, state: State) -> WarehouseRow:
    return await _warehouse(prefix, state)


async def _warehouse(prefix: str, state: State) -> WarehouseRow:
    """The active warehouse named by the `{prefix}` path segment (its id, as /config advertises).

    From the warehouse cache, so it holds no connection for the request: a handler that writes takes
    its connections one at a time and can never wait for a second one while holding the first.
    """
    try:
        warehouse_id = uuid.UUID(prefix)
    except ValueError:
        raise NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist") from None

    async def lookup() -> WarehouseRow | None:
        async with services(state).ctx.store.connection() as conn:
            row: WarehouseRow | None = await services(state).read_model.warehouse_by_id(conn, warehouse_id)
            return row

    warehouses: WarehouseCache = services(state).warehouses
    warehouse = await warehouses.get(warehouse_id, lookup)
    if warehouse is None:
        raise NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist")
    return require_active(warehouse)


def provide_project_id(request: Request[Any, Any, Any], state: State) -> uuid.UUID:
    return project_id_of(request, services(state).settings)


def project_id_of(connection: ASGIConnection[Any, Any, Any, Any], settings: Settings) -> uuid.UUID:
    """The project named by the `x-project-id` header, else the default project (when enabled).

    Raises: BadRequestError for a malformed header or a missing one with the default project disabled.
    """
    header = connection.headers.get("x-project-id")
    if header is None:
        if not settings.enable_default_project:
            raise BadRequestError("Pass the project in the x-project-id header")
        return NIL_PROJECT_ID
    try:
        return uuid.UUID(header)
    except ValueError:
        raise BadRequestError(f"x-project-id is not a UUID: {header!r}") from None


def split_warehouse_name(value: str, project_id: uuid.UUID) -> tuple[uuid.UUID, str]:
    """`/config?warehouse=`: `<name>` in the request's project, or `<project-id>/<name>`."""
    project, _, name = value.rpartition("/")
    if not project:
        return project_id, value
    try:
        return uuid.UUID(project), name
    except ValueError:
        return project_id, value


def provide_event_metadata(request: Request[Any, Any, Any], principal: Principal) -> EventMetadata:
    """The caller (the authenticated user id, or `anonymous` with authentication off) and the request id."""
    return EventMetadata(actor=principal.user_id, request_id=request.scope.get("state", {}).get("request_id"))


def provide_principal(request: Request[Any, Any, Any], read_model: CatalogReadModel) -> Principal:
    return request_principal(request.scope)


def provide_listing_access(meta: EventMetadata, principal: Principal, state: State) -> ListingAccess:
    return ListingAccess(services(state).authorizer, principal)


def provide_catalog_metadata(request: Request[Any, Any, Any], warehouse_row: WarehouseRow) -> EventMetadata:
    return provide_event_metadata(request, request_principal(request.scope))


def provide_catalog_access(request: Request[Any, Any, Any], conn: Connection, state: State) -> ListingAccess:
    return ListingAccess(services(state).authorizer, request_principal(request.scope))


def parse_namespace(namespace: str) -> Namespace:
    """Raises: BadRequestError for an empty namespace segment."""
    if not namespace:
        raise BadRequestError("Namespace must not be empty")
    return Namespace(tuple(decode_name(part) for part in Namespace.from_path(namespace).parts))


def parse_parent(parent: str) -> Namespace:
    """The `parent` query parameter: the path encoding (parts percent-encoded, joined by 0x1F) as a value.

    Clients encode the separator either raw or as `%1F` once more; both are accepted.
    """
    parts = re.split("\x1f|%1[fF]", parent)
    return Namespace(tuple(unquote(part) for part in parts))


DEPENDENCIES = {
    "ctx": Provide(provide_ctx, sync_to_thread=False),
    "read_model": Provide(provide_read_model, sync_to_thread=False),
    "conn": Provide(provide_conn),
    "warehouse_row": Provide(provide_warehouse),
    "project_id": Provide(provide_project_id, sync_to_thread=False),
    "meta": Provide(provide_event_metadata, sync_to_thread=False),
    "principal": Provide(provide_principal, sync_to_thread=False),
    "access": Provide(provide_listing_access, sync_to_thread=False),
}
# The catalog controllers' shorter chain.
CATALOG_DEPENDENCIES = {
    "warehouse_row": Provide(provide_catalog_warehouse),
    "conn": Provide(provide_warehouse_conn),
    "meta": Provide(provide_catalog_metadata, sync_to_thread=False),
    "access": Provide(provide_catalog_access, sync_to_thread=False),
}
