"""Import routes (issue 32): `POST /warehouse/{id}/import` queues `catalog-es import` as a task on the one task
runner; `GET /warehouse/{id}/import/{task_id}` says how far it got.

Queuing needs `create` and `modify` on the warehouse (the import creates namespaces and tables and may move a
table to the source's newer metadata); reading progress needs `modify`, as every task route. The source's
properties are sealed in the secrets store at once (commands/catalog_import.py): the response, the task and its
events name the source by its label only.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
from litestar import get, post
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.rules import Check, requires
from api.dependencies import RequestScope
from api.imports.catalog import source_label
from api.management.import_wire import ImportCatalogRequest, ImportCatalogResponse, ImportStatusResponse
from api.management.rules import on_warehouse
from api.management.task_wire import ApiStatus
from catalog_es.errors import NoSuchTaskError
from catalog_es.store.database import Connection
from commands.catalog_import import ImportCatalog, ImportPayload, handle_import_catalog
from commands.task_handlers import CATALOG_IMPORT
from projections.task_views import AttemptRow, TaskRow, task_details

_CREATE, _MODIFY = on_warehouse("create"), on_warehouse("modify")


async def importer(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """`create` and `modify` on the warehouse."""
    await _CREATE(check, params, connection)
    await _MODIFY(check, params, connection)


@post(
    "/warehouse/{warehouse_id:uuid}/import",
    status_code=202,
    operation_id="import_catalog",
    opt=requires(importer),
)
async def import_catalog(
    req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], data: JSONBody[ImportCatalogRequest]
) -> ImportCatalogResponse:
    """Queue an import of another catalog into the warehouse; follow it at `import/{task-id}`.

    Raises:
        BadRequestError: properties naming code or an unknown catalog type; no secrets key on this server.
        NoSuchWarehouseError, WarehouseInactiveError: not an active warehouse.
    """
    properties = data.checked_source()
    command = ImportCatalog(
        warehouse_id=warehouse_id,
        properties=properties,
        source=source_label(properties, data.source_name),
        catalog_name=data.catalog_name,
        namespaces=[list(parts) for parts in data.namespaces or []],
        metadata=req.meta,
    )
    return ImportCatalogResponse(task_id=await handle_import_catalog(command, req.ctx))


def _status(row: TaskRow, attempts: list[AttemptRow]) -> ImportStatusResponse:
    progress = row.progress or {}
    result = next((a.result for a in attempts if a.status == "success" and a.result is not None), None)
    ended = {"failed": "failed", "cancelled": "cancelled"}.get(row.status, "queued")  # no progress kept
    phase = "done" if result is not None else str(progress.get("phase", ended))
    counts = (result or progress).get("counts", {})
    return ImportStatusResponse(
        task_id=row.task_id,
        status=msgspec.convert(row.status.upper(), ApiStatus),
        source=msgspec.convert(row.payload, ImportPayload).source,
        phase=phase,
        attempt=row.attempt,
        done=int(progress.get("done", sum(counts.values()))),
        total=int(progress.get("total", sum(counts.values()))),
        counts=counts,
        unchanged=None if result is None else result.get("unchanged"),
        uncovered=list(progress.get("uncovered", [])),
        uncovered_count=int(progress.get("uncovered_count", 0)),
        errors=[a.message for a in attempts if a.message],
    )


@get("/warehouse/{warehouse_id:uuid}/import/{task_id:uuid}", operation_id="get_import", opt=requires(_MODIFY))
async def get_import(
    conn: NamedDependency[Connection], warehouse_id: FromPath[uuid.UUID], task_id: FromPath[uuid.UUID]
) -> ImportStatusResponse:
    """How far an import got (progress while it runs, its summary once done, every failed attempt's message).

    Raises:
        NoSuchTaskError: not an import task of this warehouse.
    """
    found = await task_details(conn, [warehouse_id], task_id)
    if found is None or found[0].queue != CATALOG_IMPORT:
        raise NoSuchTaskError(f"Import task with id {task_id} not found")
    return _status(*found)


IMPORT_ROUTES = (import_catalog, get_import)
