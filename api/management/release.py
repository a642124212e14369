"""Hand-off routes: `POST /warehouse/{id}/{table|view}/{id}/release` removes it here without touching a file."""

from __future__ import annotations

import uuid

from litestar import post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.access_checks import not_found
from api.management.rules import on_object_in_warehouse
from api.management.wire import ReleaseRequest
from catalog_es.identifiers import Namespace
from catalog_es.tabular_kind import TABLE, VIEW, TabularKind
from commands.release import ReleaseTabular, handle_release
from projections.catalog.tabular_rows import tabular_by_id


async def _release(
    req: RequestScope, warehouse_id: uuid.UUID, object_id: uuid.UUID, *, kind: TabularKind, to: str
) -> None:
    async with req.ctx.store.connection() as conn:  # released before the command takes its own
        row = await tabular_by_id(conn, kind, warehouse_id, object_id)
    if row is None:
        raise not_found(kind.name, object_id)
    command = ReleaseTabular(
        warehouse_id=warehouse_id,
        tabular_id=object_id,
        namespace=Namespace(tuple(row.namespace)),
        name=row.name,
        kind=kind.name,
        released_to=to,
        metadata=req.meta,
    )
    await handle_release(command, req.ctx)


@post(
    "/warehouse/{warehouse_id:uuid}/table/{object_id:uuid}/release",
    status_code=204,
    operation_id="release_table",
    opt=requires(on_object_in_warehouse("table", "modify")),
)
async def release_table(
    req: NamedDependency[RequestScope],
    warehouse_id: FromPath[uuid.UUID],
    object_id: FromPath[uuid.UUID],
    data: JSONBody[ReleaseRequest],
) -> None:
    """Hand the table off: no purge, no soft delete, its location claim released. Raises: NoSuchTableError,
    ProtectedError."""
    await _release(req, warehouse_id, object_id, kind=TABLE, to=data.released_to)


@post(
    "/warehouse/{warehouse_id:uuid}/view/{object_id:uuid}/release",
    status_code=204,
    operation_id="release_view",
    opt=requires(on_object_in_warehouse("view", "modify")),
)
async def release_view(
    req: NamedDependency[RequestScope],
    warehouse_id: FromPath[uuid.UUID],
    object_id: FromPath[uuid.UUID],
    data: JSONBody[ReleaseRequest],
) -> None:
    """Hand the view off (its metadata files stay). Raises: NoSuchViewError, ProtectedError."""
    await _release(req, warehouse_id, object_id, kind=VIEW, to=data.released_to)


RELEASE_ROUTES = (release_table, release_view)
