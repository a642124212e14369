"""GET /catalog/v1/config: resolve the warehouse and advertise the prefix and endpoints."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from litestar import get
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from api.as_of_prefix import is_read, resolve_as_of, split_warehouse_value
from api.auth.rules import requires
from api.catalog.endpoints import IMPLEMENTED_ENDPOINTS
from api.catalog.rules import configured_warehouse
from api.catalog.wire import CatalogConfig
from api.container import services
from api.dependencies import RequestScope, split_warehouse_name
from api.settings import Settings
from catalog_es.errors import BadRequestError, NoSuchWarehouseError
from catalog_es.planning.mode import warehouse_mode
from catalog_es.state import require_active
from catalog_es.store.database import Connection
from projections.permissions.read_policies import has_read_policy_in


@get("/config", opt=requires(configured_warehouse))
async def get_config(
    req: NamedDependency[RequestScope],
    conn: NamedDependency[Connection],
    state: State,
    warehouse: Annotated[str | None, QueryParameter(name="warehouse")] = None,
) -> CatalogConfig:
    """Raises: NoSuchWarehouseError (404, spec 1.11) for an unknown warehouse, WarehouseInactiveError (403)."""
    project_id = req.project_id  # the header is checked first, as it always was
    if not warehouse:
        raise BadRequestError("Pass the warehouse name as ?warehouse=<name>")
    value, as_of = split_warehouse_value(warehouse)
    project, name = split_warehouse_name(value, project_id)
    row = await req.read_model.warehouse_by_name(conn, project, name)
    if row is None:
        raise NoSuchWarehouseError(f"Warehouse {warehouse!r} does not exist")
    require_active(row)
    settings: Settings = services(state).settings
    prefix, endpoints = str(row.id), IMPLEMENTED_ENDPOINTS
    if as_of is not None:  # `<name>@<time or position>`: the catalog as of then, read-only
        prefix = f"{row.id}@{await resolve_as_of(conn, as_of)}"
        endpoints = [endpoint for endpoint in IMPLEMENTED_ENDPOINTS if is_read(endpoint)]
    # `server` as an override: clients MUST plan here (pyiceberg 0.12 reads it from the catalog's properties).
    # The warehouse's own mode, else the server's; a principal under a read policy on any table of the
    # warehouse gets `server` whatever the mode: its reads are planned here.
    planning = warehouse_mode(settings.scan_planning.mode, row.scan_planning)
    authz, principal = services(state).authorizer, req.principal
    if authz.enabled and await has_read_policy_in(conn, row.id, principal.user_id, principal.roles):
        planning = "server"
    return CatalogConfig(
        defaults={"prefix": prefix},
        overrides={"scan-planning-mode": "server"} if planning == "server" else {},
        endpoints=endpoints,
        idempotency_key_lifetime=iso_duration(settings.idempotency_key_lifetime),
    )


def iso_duration(lifetime: timedelta) -> str:
    """`PT30M`-style ISO-8601 duration, as `/config` advertises it."""
    return (
        f"PT{int(lifetime.total_seconds())}S"
        if lifetime.total_seconds() % 60
        else f"PT{int(lifetime.total_seconds() // 60)}M"
    )
