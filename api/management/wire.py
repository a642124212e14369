"""Management API bodies (Lakekeeper's /management/v1 shapes, access routes too): kebab-case, strict."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

import msgspec

from api.wire_limits import Name, Text
from catalog_es.metadata.rebase import RebaseMode
from catalog_es.planning.mode import ScanPlanningMode

Json = dict[str, Any]


class Request(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True):
    pass


class Response(msgspec.Struct, rename="kebab", kw_only=True):
    pass


class BootstrapRequest(Request):
    accept_terms_of_use: bool
    is_operator: bool = False
    user_name: Name | None = None
    user_email: Name | None = None
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
    project_name: Name
    project_id: uuid.UUID | None = None


class CreateProjectResponse(Response):
    project_id: uuid.UUID


class GetProjectResponse(Response):
    project_id: uuid.UUID
    project_name: str


class ListProjectsResponse(Response):
    projects: list[GetProjectResponse]


class RenameRequest(Request):
    new_name: Name


class CreateWarehouseRequest(Request):
    warehouse_name: Name
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
    server_side_rebase: RebaseMode | None = None  # the warehouse's own mode; null: the server's setting
    scan_planning: ScanPlanningMode | None = None  # the warehouse's own scan-planning mode; null: the server's


class ListWarehousesResponse(Response):
    warehouses: list[GetWarehouseResponse]


class UpdateStorageRequest(Request):
    storage_profile: Json
    storage_credential: Json | None = None


class UpdateCredentialRequest(Request):
    new_storage_credential: Json | None = None


class UpdateDeleteProfileRequest(Request):
    delete_profile: Json


class UpdateServerSideRebaseRequest(Request):
    """`mode` null or absent: the warehouse follows the server's setting again."""

    mode: RebaseMode | None = None


class UpdateScanPlanningRequest(Request):
    """`mode` null or absent: the warehouse follows the server's setting again."""

    mode: ScanPlanningMode | None = None


class AccessRequest(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True):
    pass


class AccessResponse(msgspec.Struct, rename="kebab", kw_only=True):
    pass


class CreateUserRequest(AccessRequest):
    id: Name | None = None
    name: Name | None = None
    email: Name | None = None
    user_type: Literal["human", "application"] | None = None
    update_if_exists: bool = False


class User(AccessResponse):
    id: str
    name: str
    email: str | None
    user_type: str
    last_updated_with: str
    created_at: datetime
    updated_at: datetime | None


class ListUsersResponse(AccessResponse):
    users: list[User]
    next_page_token: str | None = None


class CreateRoleRequest(AccessRequest):
    name: Name
    description: Text | None = None
    project_id: uuid.UUID | None = None


class UpdateRoleRequest(AccessRequest):
    name: Name
    description: Text | None = None


class Role(AccessResponse):
    id: uuid.UUID
    name: str
    description: str | None
    project_id: uuid.UUID
    created_at: datetime
    updated_at: datetime | None


class ListRolesResponse(AccessResponse):
    roles: list[Role]


class Assignment(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """One privilege of a user or a role: `{"type": "select", "user": "oidc~..."}` or `{"type": ..., "role": id}`."""

    type: str
    user: str | None = None
    role: uuid.UUID | None = None


class UpdateAssignmentsRequest(AccessRequest):
    writes: list[Assignment] = []
    deletes: list[Assignment] = []


class AssignmentsResponse(AccessResponse):
    assignments: list[Assignment]


class EffectiveAssignment(AccessResponse, omit_defaults=True):
    """An assignment in force on an object, with the object it is granted on (the object itself or a container)."""

    type: str
    origin_kind: str
    origin_id: uuid.UUID
    user: str | None = None
    role: uuid.UUID | None = None


class EffectiveAssignmentsResponse(AccessResponse):
    """Nearest origin first: the object's own grants, then its namespace's, warehouse's, project's, server's."""

    assignments: list[EffectiveAssignment]


class ManagedAccess(AccessRequest):
    managed_access: bool


class ManagedAccessResponse(AccessResponse):
    managed_access: bool
    managed_access_inherited: bool


class CheckRequest(AccessRequest):
    """Whether a principal (the caller by default) holds a privilege on an object."""

    object_type: Literal["server", "project", "warehouse", "namespace", "table", "view", "role"]
    privilege: str
    object_id: uuid.UUID | None = None
    user: str | None = None


class CheckResponse(AccessResponse):
    allowed: bool


class BatchCheckRequest(AccessRequest):
    checks: list[CheckRequest]


class BatchCheckResponse(AccessResponse):
    results: list[CheckResponse]


class RoleMember(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """A user (`{"user": "oidc~..."}`) or a role (`{"role": "<id>"}`) that is a member of a role."""

    user: str | None = None
    role: uuid.UUID | None = None


class RoleMembers(AccessRequest):
    members: list[RoleMember]


class CreateServicePrincipalRequest(Request):
    name: Name


class ServicePrincipal(Response):
    """A service principal as anyone with the right may read it: never its secret."""

    client_id: uuid.UUID
    user_id: str
    name: str
    key_version: int
    created_at: datetime
    updated_at: datetime | None
    revoked_at: datetime | None


class ServicePrincipalCredentials(Response):
    """Shown once, to the creator or rotator: the secret is stored only as a hash."""

    client_id: uuid.UUID
    client_secret: str
    credential: str  # `<client id>:<client secret>`, as pyiceberg and Spark take it
    user_id: str
    key_version: int


class ListServicePrincipalsResponse(Response):
    service_principals: list[ServicePrincipal]


class ReleaseRequest(Request):
    """Where the table or view went (a catalog URI or name), recorded with the event."""

    released_to: Name


# Read policies (issue 33): rows and columns per principal on a table.


class ReadPolicyRequest(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True):
    """Exactly one of `user` and `role`; `row-filter` an Iceberg expression in the REST spec's JSON form."""

    user: str | None = None
    role: uuid.UUID | None = None
    row_filter: Any = None
    columns: list[str] | None = None


class ReadPolicy(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", omit_defaults=True):
    user: str | None = None
    role: uuid.UUID | None = None
    row_filter: Any = None
    columns: list[str] | None = None


class ReadPoliciesResponse(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    policies: list[ReadPolicy]
