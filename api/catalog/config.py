"""GET /catalog/v1/config: resolve the warehouse and advertise the prefix and endpoints."""

from __future__ import annotations

import uuid
from typing import Annotated

from litestar import get
from litestar.datastructures import State
from litestar.params import Parameter

from api.catalog.endpoints import IMPLEMENTED_ENDPOINTS
from api.idempotency import iso_duration
from api.settings import Settings
from api.wire import CatalogConfig
from catalog_es.database import Connection
from catalog_es.errors import BadRequestError, NoSuchWarehouseError
from catalog_es.identifiers import NIL_PROJECT_ID
from projections.catalog_queries import CatalogReadModel


def _split_warehouse(value: str) -> tuple[uuid.UUID, str]:
    """`<name>` in the default project, or `<project-id>/<name>`."""
    project, _, name = value.rpartition("/")
    if not project:
        return NIL_PROJECT_ID, value
    try:
        return uuid.UUID(project), name
    except ValueError:
        return NIL_PROJECT_ID, value


@get("/catalog/v1/config")
async def get_config(
    conn: Connection,
    read_model: CatalogReadModel,
    state: State,
    warehouse: Annotated[str | None, Parameter(query="warehouse")] = None,
) -> CatalogConfig:
    """Raises: NoSuchWarehouseError (404, spec 1.11) for an unknown warehouse."""
    if not warehouse:
        raise BadRequestError("Pass the warehouse name as ?warehouse=<name>")
    project_id, name = _split_warehouse(warehouse)
    row = await read_model.warehouse_by_name(conn, project_id, name)
    if row is None:
        raise NoSuchWarehouseError(f"Warehouse {warehouse!r} does not exist")
    settings: Settings = state.settings
    return CatalogConfig(
        defaults={"prefix": str(row.id)},
        overrides={},
        endpoints=IMPLEMENTED_ENDPOINTS,
        idempotency_key_lifetime=iso_duration(settings.idempotency_key_lifetime),
    )
