"""Warehouses under /management/v1: create, list, get, rename, (de)activate, storage, credential, delete profile,
server-side rebase, scan planning, delete."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from litestar import Controller, Request, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from api.auth.rules import requires
from api.auth.target import creation_project
from api.dependencies import RequestScope
from api.management.rules import new_warehouse_project, on_project, on_warehouse, storage_by_operator
from api.management.wire import (
    CreateWarehouseRequest,
    CreateWarehouseResponse,
    GetWarehouseResponse,
    ListWarehousesResponse,
    RenameRequest,
    UpdateCredentialRequest,
    UpdateDeleteProfileRequest,
    UpdateScanPlanningRequest,
    UpdateServerSideRebaseRequest,
    UpdateStorageRequest,
)
from catalog_es.errors import NoSuchWarehouseError
from catalog_es.state import WarehouseRow
from catalog_es.store.database import Connection
from commands.warehouses import (
    CreateWarehouse,
    DeleteWarehouse,
    RenameWarehouse,
    SetWarehouseActive,
    UpdateCredential,
    UpdateDeleteProfile,
    UpdateScanPlanning,
    UpdateServerSideRebase,
    UpdateStorage,
    handle_create_warehouse,
    handle_delete_warehouse,
    handle_rename_warehouse,
    handle_set_warehouse_active,
    handle_update_credential,
    handle_update_delete_profile,
    handle_update_scan_planning,
    handle_update_server_side_rebase,
    handle_update_storage,
)
from projections.protection import protected_ids


def _response(row: WarehouseRow, protected: set[uuid.UUID]) -> GetWarehouseResponse:
    credential = row.storage_credential
    return GetWarehouseResponse(
        id=row.id,
        warehouse_id=row.id,
        name=row.name,
        project_id=row.project_id,
        storage_profile=row.storage_profile,
        delete_profile=row.delete_profile,
        status="active" if row.status == "active" else "inactive",
        protected=row.id in protected,
        storage_credential_type=str(row.storage_profile.get("type")) if credential else None,
        storage_credential_fingerprint=credential.fingerprint if credential else None,
        server_side_rebase=row.server_side_rebase,
        scan_planning=row.scan_planning,
    )


class WarehousesController(Controller):
    path = "/warehouse"

    @post("/", status_code=201, opt=requires(storage_by_operator(new_warehouse_project, CreateWarehouseRequest)))
    async def create_warehouse(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[CreateWarehouseRequest],
        request: Request[Any, Any, Any],
    ) -> CreateWarehouseResponse:
        """Validates the profile and real access to the storage first (400 with the reason if it fails).

        In the project the guard decided on (resolved once for the request: api/auth/target.py).
        """
        command = CreateWarehouse(
            project_id=creation_project(request, data.project_id),
            name=data.warehouse_name,
            storage_profile=data.storage_profile,
            storage_credential=data.storage_credential,
            delete_profile=data.delete_profile,
            metadata=req.meta,
        )
        return CreateWarehouseResponse(warehouse_id=await handle_create_warehouse(command, req.ctx))

    @get("/", opt=requires(on_project("describe")))
    async def list_warehouses(
        self,
        req: NamedDependency[RequestScope],
        conn: NamedDependency[Connection],
        warehouse_status: Annotated[
            list[Literal["active", "inactive"]] | None, QueryParameter(name="warehouseStatus")
        ] = None,
    ) -> ListWarehousesResponse:
        wanted = set(warehouse_status or ["active", "inactive"])
        rows = await req.read_model.warehouses_in_project(conn, req.project_id)
        rows = [row for row in rows if row.status in wanted]
        protected = await protected_ids(conn, [row.id for row in rows])
        return ListWarehousesResponse(warehouses=[_response(row, protected) for row in rows])

    @get("/{warehouse_id:uuid}", opt=requires(on_warehouse(None)))
    async def get_warehouse(
        self, req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], conn: NamedDependency[Connection]
    ) -> GetWarehouseResponse:
        row = await req.read_model.warehouse_by_id(conn, warehouse_id)
        if row is None:
            raise NoSuchWarehouseError(f"Warehouse {warehouse_id} does not exist")
        return _response(row, await protected_ids(conn, [row.id]))

    @delete("/{warehouse_id:uuid}", status_code=204, opt=requires(on_warehouse("modify")))
    async def delete_warehouse(
        self, req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], force: FromQuery[bool] = False
    ) -> None:
        """Raises: NotEmptyError (409) while it holds namespaces or tables, ProtectedError (409) while it is
        protected, unless `force=true` (which needs modify on the warehouse, as the route itself does)."""
        await handle_delete_warehouse(DeleteWarehouse(warehouse_id, req.meta, force), req.ctx)

    @post("/{warehouse_id:uuid}/rename", status_code=204, opt=requires(on_warehouse("modify")))
    async def rename_warehouse(
        self, req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], data: JSONBody[RenameRequest]
    ) -> None:
        await handle_rename_warehouse(RenameWarehouse(warehouse_id, data.new_name, req.meta), req.ctx)

    @post("/{warehouse_id:uuid}/deactivate", status_code=204, opt=requires(on_warehouse("modify")))
    async def deactivate_warehouse(self, req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID]) -> None:
        await handle_set_warehouse_active(SetWarehouseActive(warehouse_id, active=False, metadata=req.meta), req.ctx)

    @post("/{warehouse_id:uuid}/activate", status_code=204, opt=requires(on_warehouse("modify")))
    async def activate_warehouse(self, req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID]) -> None:
        await handle_set_warehouse_active(SetWarehouseActive(warehouse_id, active=True, metadata=req.meta), req.ctx)

    @post(
        "/{warehouse_id:uuid}/storage",
        status_code=204,
        opt=requires(storage_by_operator(on_warehouse("modify"), UpdateStorageRequest)),
    )
    async def update_storage(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateStorageRequest],
    ) -> None:
        """Immutable fields (type, bucket, key-prefix, location, region without endpoint) cannot change."""
        command = UpdateStorage(
            warehouse_id=warehouse_id,
            storage_profile=data.storage_profile,
            storage_credential=data.storage_credential,
            metadata=req.meta,
        )
        await handle_update_storage(command, req.ctx)

    @post(
        "/{warehouse_id:uuid}/storage-credential",
        status_code=204,
        opt=requires(storage_by_operator(on_warehouse("modify"), UpdateCredentialRequest)),
    )
    async def update_credential(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateCredentialRequest],
    ) -> None:
        command = UpdateCredential(
            warehouse_id=warehouse_id, storage_credential=data.new_storage_credential, metadata=req.meta
        )
        await handle_update_credential(command, req.ctx)

    @post("/{warehouse_id:uuid}/delete-profile", status_code=204, opt=requires(on_warehouse("modify")))
    async def update_delete_profile(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateDeleteProfileRequest],
    ) -> None:
        await handle_update_delete_profile(UpdateDeleteProfile(warehouse_id, data.delete_profile, req.meta), req.ctx)

    @post("/{warehouse_id:uuid}/server-side-rebase", status_code=204, opt=requires(on_warehouse("modify")))
    async def update_server_side_rebase(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateServerSideRebaseRequest],
    ) -> None:
        """`on`, `opt-in` or `off` for the warehouse's tables (issue 19), overriding the server's setting;
        null falls back to it. The table property `catalog-es.server-side-rebase` still decides under `opt-in`
        and opts a table out under `on`."""
        await handle_update_server_side_rebase(UpdateServerSideRebase(warehouse_id, data.mode, req.meta), req.ctx)

    @post("/{warehouse_id:uuid}/scan-planning", status_code=204, opt=requires(on_warehouse("modify")))
    async def update_scan_planning(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateScanPlanningRequest],
    ) -> None:
        """`client` or `server` for the warehouse's tables (issue 33), advertised as `scan-planning-mode` in /config
        and loadTable, overriding the server's setting; null falls back to it. The table property
        `catalog-es.scan-planning-mode` still decides a table's loadTable; a read policy still forces `server`."""
        await handle_update_scan_planning(UpdateScanPlanning(warehouse_id, data.mode, req.meta), req.ctx)
