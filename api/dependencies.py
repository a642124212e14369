"""Request-scoped dependencies: the command context, a read connection, the warehouse, who is asking."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import unquote

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency, Provide

from api.as_of_prefix import is_write, split_prefix
from api.auth.authorizer import Authorizer
from api.auth.listing_filter import ListingAccess
from api.auth.principal import Principal, request_principal
from api.container import Services, services
from api.encoded_slash import decode_name
from api.project_header import project_id_of
from api.settings import Settings
from catalog_es.errors import BadRequestError, ForbiddenError, NoSuchWarehouseError
from catalog_es.identifiers import Namespace
from catalog_es.state import WarehouseRow, require_active
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from projections.catalog.as_of import AsOfReadModel
from projections.catalog.queries import CatalogReadModel
from projections.catalog.warehouse_cache import WarehouseCache

# Litestar resolves the dependencies of one level of the dependency graph concurrently, one anyio task
# each, which cost a fifth of a catalog request's CPU and most of its latency tail under load
# (litestar-org/litestar#4563). So a handler gets one `req` (everything about the request that needs no
# connection) and, when it reads, one `conn` taken after it: two levels of one dependency each.


class RequestScope:
    """What a handler needs of the app and of the caller, resolved once per request.

    `warehouse` is the active warehouse named by the route's `{prefix}` segment, resolved before the
    handler runs (so an unknown or inactive one answers before the body is acted on); `project_id` is
    read only by the handlers that act on a project, as a header their routes alone require.
    """

    __slots__ = (
        "_connection",
        "_warehouse",
        "access",
        "as_of",
        "ctx",
        "meta",
        "principal",
        "read_model",
        "settings",
    )

    def __init__(
        self,
        connection: ASGIConnection[Any, Any, Any, Any],
        ctx: CommandContext,
        read_model: CatalogReadModel,
        principal: Principal,
        warehouse: WarehouseRow | None,
    ) -> None:
        built = services(connection.app.state)
        self._connection, self._warehouse = connection, warehouse
        self.ctx, self.read_model, self.principal = ctx, read_model, principal
        self.as_of: int | None = None  # the log position of an as-of prefix: a past catalog, read-only
        self.settings: Settings = built.settings
        self.access = ListingAccess(built.authorizer, principal)
        self.meta = EventMetadata(
            actor=principal.user_id, request_id=connection.scope.get("state", {}).get("request_id")
        )

    @property
    def warehouse(self) -> WarehouseRow:
        """Raises: RuntimeError on a route without `{prefix}` (a programming error, not a client's)."""
        if self._warehouse is None:
            raise RuntimeError("This route names no warehouse")
        return self._warehouse

    @property
    def project_id(self) -> uuid.UUID:
        """Raises: BadRequestError (see `project_id_of`)."""
        return project_id_of(self._connection, self.settings)


async def provide_scope(request: Request[Any, Any, Any]) -> RequestScope:
    """Under an as-of prefix (`<warehouse>@<position>`) the read model is the catalog as of then, read-only,
    and listings are not filtered (the guard required describe on the whole warehouse).

    Raises: ForbiddenError for a write under an as-of prefix; BadRequestError for a malformed one.
    """
    built = services(request.app.state)
    prefix = request.path_params.get("prefix")
    position = None if prefix is None else split_prefix(str(prefix))[1]
    if position is not None and is_write(request.method, request.url.path):
        raise ForbiddenError(f"Warehouse {prefix!r} is the catalog as of a past position: read-only")
    warehouse = None if prefix is None else await _warehouse(str(prefix), built)
    principal = request_principal(request.scope)
    ctx = built.ctx if warehouse is None else built.ctx.for_request(warehouse)
    if position is None:
        return RequestScope(request, ctx, built.read_model, principal, warehouse)
    as_of = AsOfReadModel(built.as_of, position)
    scope = RequestScope(request, ctx, as_of, principal, warehouse)
    scope.as_of = position
    scope.access = ListingAccess(Authorizer(enabled=False), principal)
    return scope


def unconfirmed_scope(request: Request[Any, Any, Any]) -> RequestScope | None:
    """`provide_scope` with the active warehouse the cache holds now, before any look at the log, for a read that
    takes it only once the log head its own statement read confirms it (`WarehouseCache.confirmed`); None where
    `provide_scope` decides (no prefix, an as-of one, a warehouse not cached or not active). Raises nothing.
    """
    prefix = request.path_params.get("prefix")
    if prefix is None or "@" in str(prefix):
        return None
    try:
        warehouse_id = uuid.UUID(str(prefix))
    except ValueError:
        return None
    built = services(request.app.state)
    warehouse = built.warehouses.unconfirmed(warehouse_id)
    if warehouse is None or warehouse.status != "active":
        return None
    # The shared context, not `for_request`'s copy: such a read resolves no warehouse again, and the context keeps
    # the storage of the last row it was asked for (a copy would look it up again at every request).
    return RequestScope(request, built.ctx, built.read_model, request_principal(request.scope), warehouse)


async def provide_conn(req: NamedDependency[RequestScope]) -> AsyncGenerator[Connection, None]:
    """A read connection, taken after `req`: a handler that writes takes its connections one at a time."""
    async with req.ctx.store.connection() as conn:
        yield conn


async def _warehouse(prefix: str, built: Services) -> WarehouseRow:
    """The active warehouse named by the `{prefix}` path segment (its id, as /config advertises).

    From the warehouse cache, so it holds no connection for the request: a handler that writes takes
    its connections one at a time and can never wait for a second one while holding the first.
    """
    try:
        warehouse_id = uuid.UUID(split_prefix(prefix)[0])
    except ValueError:
        raise NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist") from None

    async def lookup() -> WarehouseRow | None:
        async with built.ctx.store.connection() as conn:
            row: WarehouseRow | None = await built.read_model.warehouse_by_id(conn, warehouse_id)
            return row

    warehouses: WarehouseCache = built.warehouses
    warehouse = await warehouses.get(warehouse_id, lookup)
    if warehouse is None:
        raise NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist")
    return require_active(warehouse)


def split_warehouse_name(value: str, project_id: uuid.UUID) -> tuple[uuid.UUID, str]:
    """`/config?warehouse=`: `<name>` in the request's project, or `<project-id>/<name>`."""
    project, _, name = value.rpartition("/")
    if not project:
        return project_id, value
    try:
        return uuid.UUID(project), name
    except ValueError:
        return project_id, value


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
    "req": Provide(provide_scope),
    "conn": Provide(provide_conn),
}
