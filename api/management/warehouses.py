"""Warehouses under /management/v1: create, list, get, rename, (de)activate, storage, credential, delete."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from litestar import Controller, Request, delete, get, post
from litestar.params import Parameter

from api.auth.target import creation_project
from api.management.wire import (
    CreateWarehouseRequest,
    CreateWarehouseResponse,
    GetWarehouseResponse,
    ListWarehousesResponse,
    RenameRequest,
    UpdateCredentialRequest,
    UpdateDeleteProfileRequest,
    UpdateStorageRequest,
)
from catalog_es.errors import NoSuchWarehouseError
from catalog_es.state import WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.warehouses import (
    CreateWarehouse,
    DeleteWarehouse,
    RenameWarehouse,
    SetWarehouseActive,
    UpdateCredential,
    UpdateDeleteProfile,
    UpdateStorage,
    handle_create_warehouse,
    handle_delete_warehouse,
    handle_rename_warehouse,
    handle_set_warehouse_active,
    handle_update_credential,
    handle_update_delete_profile,
    handle_update_storage,
)
from projections.catalog.queries import CatalogReadModel


def _response(row: WarehouseRow) -> GetWarehouseResponse:
    credential = row.storage_credential
    return GetWarehouseResponse(
        id=row.id,
        warehouse_id=row.id,
        name=row.name,
        project_id=row.project_id,
        storage_profile=row.storage_profile,
        delete_profile=row.delete_profile,
        status="active" if row.status == "active" else "inactive",
        storage_credential_type=str(row.storage_profile.get("type")) if credential else None,
        storage_credential_fingerprint=credential.fingerprint if credential else None,
    )


class WarehousesController(Controller):
    path = "/management/v1/warehouse"

    @post("/", status_code=201)
    async def create_warehouse(
        self, data: CreateWarehouseRequest, request: Request[Any, Any, Any], ctx: CommandContext, meta: EventMetadata
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
            metadata=meta,
        )
        return CreateWarehouseResponse(warehouse_id=await handle_create_warehouse(command, ctx))

    @get("/")
    async def list_warehouses(
        self,
        project_id: uuid.UUID,
        conn: Connection,
        read_model: CatalogReadModel,
        warehouse_status: Annotated[
            list[Literal["active", "inactive"]] | None, Parameter(query="warehouseStatus")
        ] = None,
    ) -> ListWarehousesResponse:
        wanted = set(warehouse_status or ["active", "inactive"])
        rows = await read_model.warehouses_in_project(conn, project_id)
        return ListWarehousesResponse(warehouses=[_response(row) for row in rows if row.status in wanted])

    @get("/{warehouse_id:uuid}")
    async def get_warehouse(
        self, warehouse_id: uuid.UUID, conn: Connection, read_model: CatalogReadModel
    ) -> GetWarehouseResponse:
        row = await read_model.warehouse_by_id(conn, warehouse_id)
        if row is None:
            raise NoSuchWarehouseError(f"Warehouse {warehouse_id} does not exist")
        return _response(row)

    @delete("/{warehouse_id:uuid}", status_code=204)
    async def delete_warehouse(
        self, warehouse_id: uuid.UUID, ctx: CommandContext, meta: EventMetadata, force: bool = False
    ) -> None:
        """Raises: NotEmptyError (409) while it holds namespaces or tables, unless `force=true`."""
        await handle_delete_warehouse(DeleteWarehouse(warehouse_id, meta, force), ctx)

    @post("/{warehouse_id:uuid}/rename", status_code=204)
    async def rename_warehouse(
        self, warehouse_id: uuid.UUID, data: RenameRequest, ctx: CommandContext, meta: EventMetadata
    ) -> None:
        await handle_rename_warehouse(RenameWarehouse(warehouse_id, data.new_name, meta), ctx)

    @post("/{warehouse_id:uuid}/deactivate", status_code=204)
    async def deactivate_warehouse(self, warehouse_id: uuid.UUID, ctx: CommandContext, meta: EventMetadata) -> None:
        await handle_set_warehouse_active(SetWarehouseActive(warehouse_id, active=False, metadata=meta), ctx)

    @post("/{warehouse_id:uuid}/activate", status_code=204)
    async def activate_warehouse(self, warehouse_id: uuid.UUID, ctx: CommandContext, meta: EventMetadata) -> None:
        await handle_set_warehouse_active(SetWarehouseActive(warehouse_id, active=True, metadata=meta), ctx)

    @post("/{warehouse_id:uuid}/storage", status_code=204)
    async def update_storage(
        self, warehouse_id: uuid.UUID, data: UpdateStorageRequest, ctx: CommandContext, meta: EventMetadata
    ) -> None:
        """Immutable fields (type, bucket, key-prefix, location, region without endpoint) cannot change."""
        command = UpdateStorage(
            warehouse_id=warehouse_id,
            storage_profile=data.storage_profile,
            storage_credential=data.storage_credential,
            metadata=meta,
        )
        await handle_update_storage(command, ctx)

    @post("/{warehouse_id:uuid}/storage-credential", status_code=204)
    async def update_credential(
        self, warehouse_id: uuid.UUID, data: UpdateCredentialRequest, ctx: CommandContext, meta: EventMetadata
    ) -> None:
        command = UpdateCredential(
            warehouse_id=warehouse_id, storage_credential=data.new_storage_credential, metadata=meta
        )
        await handle_update_credential(command, ctx)

    @post("/{warehouse_id:uuid}/delete-profile", status_code=204)
    async def update_delete_profile(
        self, warehouse_id: uuid.UUID, data: UpdateDeleteProfileRequest, ctx: CommandContext, meta: EventMetadata
    ) -> None:
        await handle_update_delete_profile(UpdateDeleteProfile(warehouse_id, data.delete_profile, meta), ctx)
