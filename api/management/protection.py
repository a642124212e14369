"""Lakekeeper's protection routes: `GET|POST .../protection` on a warehouse and on its namespaces, tables, views.

Reading needs sight of the object; setting needs `modify` on it (Lakekeeper's `set_protection` action).
"""

from __future__ import annotations

import uuid
from datetime import datetime

import msgspec
from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.access_checks import not_found
from api.management.rules import on_object_in_warehouse, on_warehouse
from catalog_es.protection import ProtectableKind, Protection
from catalog_es.store.database import Connection
from commands.protection import SetProtection, handle_set_protection


class SetProtectionRequest(msgspec.Struct, forbid_unknown_fields=True):
    protected: bool


class ProtectionResponse(msgspec.Struct):
    """Lakekeeper's `ProtectionResponse`: its OpenAPI spells `updated_at` with an underscore."""

    protected: bool
    updated_at: datetime | None


def _response(protection: Protection) -> ProtectionResponse:
    return ProtectionResponse(protected=protection.protected, updated_at=protection.updated_at)


async def _read(
    req: RequestScope, conn: Connection, kind: ProtectableKind, warehouse_id: uuid.UUID, object_id: uuid.UUID
) -> ProtectionResponse:
    protections = req.ctx.protections
    if await protections.current_version(conn, kind, warehouse_id, object_id) is None:
        raise not_found(kind, object_id)
    return _response(await protections.protection(conn, object_id))


async def _write(
    req: RequestScope, kind: ProtectableKind, warehouse_id: uuid.UUID, object_id: uuid.UUID, protected: bool
) -> ProtectionResponse:
    command = SetProtection(kind, warehouse_id, object_id, protected, req.meta)
    return _response(await handle_set_protection(command, req.ctx))


def _path(kind: ProtectableKind) -> str:
    return f"/warehouse/{{warehouse_id:uuid}}/{kind}/{{object_id:uuid}}/protection"


class ProtectionController(Controller):
    path = "/"

    @get("/warehouse/{warehouse_id:uuid}/protection", opt=requires(on_warehouse(None)))
    async def get_warehouse_protection(
        self, req: NamedDependency[RequestScope], conn: NamedDependency[Connection], warehouse_id: FromPath[uuid.UUID]
    ) -> ProtectionResponse:
        return await _read(req, conn, "warehouse", warehouse_id, warehouse_id)

    @post("/warehouse/{warehouse_id:uuid}/protection", status_code=200, opt=requires(on_warehouse("modify")))
    async def set_warehouse_protection(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        data: JSONBody[SetProtectionRequest],
    ) -> ProtectionResponse:
        return await _write(req, "warehouse", warehouse_id, warehouse_id, data.protected)

    @get(_path("namespace"), opt=requires(on_object_in_warehouse("namespace", None)))
    async def get_namespace_protection(
        self,
        req: NamedDependency[RequestScope],
        conn: NamedDependency[Connection],
        warehouse_id: FromPath[uuid.UUID],
        object_id: FromPath[uuid.UUID],
    ) -> ProtectionResponse:
        return await _read(req, conn, "namespace", warehouse_id, object_id)

    @post(_path("namespace"), status_code=200, opt=requires(on_object_in_warehouse("namespace", "modify")))
    async def set_namespace_protection(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        object_id: FromPath[uuid.UUID],
        data: JSONBody[SetProtectionRequest],
    ) -> ProtectionResponse:
        return await _write(req, "namespace", warehouse_id, object_id, data.protected)

    @get(_path("table"), opt=requires(on_object_in_warehouse("table", None)))
    async def get_table_protection(
        self,
        req: NamedDependency[RequestScope],
        conn: NamedDependency[Connection],
        warehouse_id: FromPath[uuid.UUID],
        object_id: FromPath[uuid.UUID],
    ) -> ProtectionResponse:
        return await _read(req, conn, "table", warehouse_id, object_id)

    @post(_path("table"), status_code=200, opt=requires(on_object_in_warehouse("table", "modify")))
    async def set_table_protection(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        object_id: FromPath[uuid.UUID],
        data: JSONBody[SetProtectionRequest],
    ) -> ProtectionResponse:
        return await _write(req, "table", warehouse_id, object_id, data.protected)

    @get(_path("view"), opt=requires(on_object_in_warehouse("view", None)))
    async def get_view_protection(
        self,
        req: NamedDependency[RequestScope],
        conn: NamedDependency[Connection],
        warehouse_id: FromPath[uuid.UUID],
        object_id: FromPath[uuid.UUID],
    ) -> ProtectionResponse:
        return await _read(req, conn, "view", warehouse_id, object_id)

    @post(_path("view"), status_code=200, opt=requires(on_object_in_warehouse("view", "modify")))
    async def set_view_protection(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        object_id: FromPath[uuid.UUID],
        data: JSONBody[SetProtectionRequest],
    ) -> ProtectionResponse:
        return await _write(req, "view", warehouse_id, object_id, data.protected)
