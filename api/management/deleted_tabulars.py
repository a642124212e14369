"""Soft deletion under /management/v1/warehouse/{id}: list what was dropped, undrop it, restore a table's pointer."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime
from typing import Annotated

from litestar import get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.deleted_rules import on_held_warehouse, on_live_table, on_undrop_targets
from api.management.deleted_wire import (
    DeletedTabularResponse,
    ListDeletedTabularsResponse,
    RestoreTableRequest,
    RestoreTableResponse,
    UndeleteWarehouseRequest,
    UndeleteWarehouseResponse,
    UndroppedItem,
    UndropTabularsRequest,
    UndropTabularsResponse,
)
from api.management.rules import on_warehouse
from catalog_es.errors import BadRequestError, NoSuchWarehouseError
from catalog_es.privileges import IMPLIED_BY
from catalog_es.soft_delete import DeletedTabularRow
from catalog_es.store.database import Connection
from commands.restore_table import RestoreTable, handle_restore_table
from commands.undrop import UndropTabulars, UndropTarget, handle_undrop_tabulars
from commands.warehouse_hold import UndeleteWarehouse, handle_undelete_warehouse
from projections.permissions import queries as permissions_queries

MAX_PAGE = 1000


def _item(row: DeletedTabularRow) -> DeletedTabularResponse:
    return DeletedTabularResponse(
        id=row.id,
        name=row.name,
        namespace=row.namespace,
        typ=row.kind,
        warehouse_id=row.warehouse_id,
        deleted_at=row.deleted_at,
        expiration_date=row.expires_at,
        deleted_by=row.actor,
        purge_requested=row.purge_requested,
        namespace_id=row.namespace_id,
        created_at=row.created_at,
        dropped_with_namespace=row.with_namespace,
    )


def _token(row: DeletedTabularRow) -> str:
    return base64.urlsafe_b64encode(f"{row.deleted_at.isoformat()}|{row.id}".encode()).decode()


def _after(token: str | None) -> tuple[datetime, uuid.UUID] | None:
    if not token:
        return None
    try:
        instant, _, tabular_id = base64.urlsafe_b64decode(token.encode()).decode().partition("|")
        return datetime.fromisoformat(instant), uuid.UUID(tabular_id)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadRequestError(f"Invalid pageToken {token!r}") from None


@get("/warehouse/{warehouse_id:uuid}/deleted-tabulars", opt=requires(on_warehouse(None)))
async def list_deleted_tabulars(
    req: NamedDependency[RequestScope],
    conn: NamedDependency[Connection],
    warehouse_id: FromPath[uuid.UUID],
    namespace_id: Annotated[uuid.UUID | None, QueryParameter(name="namespaceId")] = None,
    page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
    page_size: Annotated[int, QueryParameter(name="pageSize", ge=1, le=MAX_PAGE)] = 100,
) -> ListDeletedTabularsResponse:
    """Soft-dropped tables and views, oldest drop first; only those the caller may describe (their grants
    outlive the drop), a warehouse the caller cannot see answers 404."""
    if await req.read_model.warehouse_by_id(conn, warehouse_id) is None:  # also one held after a forced deletion
        raise NoSuchWarehouseError(f"Warehouse {warehouse_id} does not exist")
    authz, principal = req.access.authz, req.access.principal
    visible_to: list[str] | None = None
    if not await authz.sees_everything_in(conn, principal, warehouse_id):
        visible_to = await permissions_queries.user_principals(conn, principal.user_id, principal.roles)
    rows = await req.read_model.list_deleted_tabulars(
        conn,
        warehouse_id,
        namespace_id=namespace_id,
        after=_after(page_token),
        limit=page_size,
        visible_to=visible_to,
        implying=list(IMPLIED_BY["describe"]),
    )
    token = _token(rows[-1]) if len(rows) == page_size else None
    return ListDeletedTabularsResponse(tabulars=[_item(row) for row in rows], next_page_token=token)


async def _undrop(req: RequestScope, warehouse_id: uuid.UUID, body: UndropTabularsRequest) -> UndropTabularsResponse:
    if not body.targets:
        raise BadRequestError("targets must not be empty")
    targets = [UndropTarget(target.type, target.id, target.name) for target in body.targets]
    restored = await handle_undrop_tabulars(UndropTabulars(warehouse_id, targets, req.meta), req.ctx)
    return UndropTabularsResponse([UndroppedItem(r.kind, r.id, r.namespace, r.name) for r in restored])


@post("/warehouse/{warehouse_id:uuid}/deleted-tabulars/undrop", status_code=200, opt=requires(on_undrop_targets))
async def undrop_tabulars(
    req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], data: JSONBody[UndropTabularsRequest]
) -> UndropTabularsResponse:
    """Bring soft-dropped tables, views (and namespace trees: ours) back, all or none; see `commands/undrop.py`."""
    return await _undrop(req, warehouse_id, data)


@post(
    "/warehouse/{warehouse_id:uuid}/deleted_tabulars/undrop",
    status_code=200,
    opt=requires(on_undrop_targets),
    deprecated=True,
)
async def undrop_tabulars_deprecated(
    req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], data: JSONBody[UndropTabularsRequest]
) -> UndropTabularsResponse:
    """Lakekeeper's deprecated spelling of `deleted-tabulars/undrop`."""
    return await _undrop(req, warehouse_id, data)


@post("/warehouse/{warehouse_id:uuid}/table/{table_id:uuid}/restore", status_code=200, opt=requires(on_live_table))
async def restore_table(
    req: NamedDependency[RequestScope],
    warehouse_id: FromPath[uuid.UUID],
    table_id: FromPath[uuid.UUID],
    data: JSONBody[RestoreTableRequest],
) -> RestoreTableResponse:
    """Point the table back at an earlier metadata file of its own history (`commands/restore_table.py`)."""
    command = RestoreTable(warehouse_id, table_id, data.metadata_location, req.meta)
    await handle_restore_table(command, req.ctx)
    return RestoreTableResponse(metadata_location=data.metadata_location)


@post("/warehouse/{warehouse_id:uuid}/undelete", status_code=200, opt=requires(on_held_warehouse))
async def undelete_warehouse(
    req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], data: JSONBody[UndeleteWarehouseRequest]
) -> UndeleteWarehouseResponse:
    """Bring back a warehouse deleted with `force` within `CATALOG_ES__WAREHOUSE_DELETE_HOLD_SECONDS`, optionally
    under a new `name` (its old one may have been taken)."""
    name = await handle_undelete_warehouse(UndeleteWarehouse(warehouse_id, req.meta, data.name), req.ctx)
    return UndeleteWarehouseResponse(warehouse_id=warehouse_id, name=name)


DELETED_TABULAR_ROUTES = (
    list_deleted_tabulars,
    undrop_tabulars,
    undrop_tabulars_deprecated,
    restore_table,
    undelete_warehouse,
)
