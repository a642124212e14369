"""Management API bodies (Lakekeeper's /management/v1 shapes): kebab-case, unknown fields refused."""

from __future__ import annotations

import uuid
from typing import Any, Literal

import msgspec

Json = dict[str, Any]


class Request(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True):
    pass


class Response(msgspec.Struct, rename="kebab", kw_only=True):
    pass


class BootstrapRequest(Request):
    accept_terms_of_use: bool
    is_operator: bool = False
    user_name: str | None = None
    user_email: str | None = None
    user_type: Literal["human", "application"] | None = None


class ServerInfo(Response):
    version: str
    bootstrapped: bool
    server_id: uuid.UUID | None
    default_project_id: uuid.UUID | None
    authz_backend: str
    aws_system_identities_enabled: bool = False
    azure_system_identities_enabled: bool = False
    gcp_system_identities_enabled: bool = False
    queues: list[str] = []


class CreateProjectRequest(Request):
    project_name: str
    project_id: uuid.UUID | None = None


class CreateProjectResponse(Response):
    project_id: uuid.UUID


class GetProjectResponse(Response):
    project_id: uuid.UUID
    project_name: str


class ListProjectsResponse(Response):
    projects: list[GetProjectResponse]


class RenameRequest(Request):
    new_name: str


class CreateWarehouseRequest(Request):
    warehouse_name: str
    storage_profile: Json
    storage_credential: Json | None = None
    delete_profile: Json | None = None
    project_id: uuid.UUID | None = None


class CreateWarehouseResponse(Response):
    warehouse_id: uuid.UUID


class GetWarehouseResponse(Response):
    id: uuid.UUID
    warehouse_id: uuid.UUID
    name: str
    project_id: uuid.UUID
    storage_profile: Json
    delete_profile: Json
    status: Literal["active", "inactive"]
    protected: bool = False
    storage_credential_type: str | None = None
    storage_credential_fingerprint: str | None = None


class ListWarehousesResponse(Response):
    warehouses: list[GetWarehouseResponse]


class UpdateStorageRequest(Request):
    storage_profile: Json
    storage_credential: Json | None = None


class UpdateCredentialRequest(Request):
    new_storage_credential: Json | None = None


class UpdateDeleteProfileRequest(Request):
    delete_profile: Json
