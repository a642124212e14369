"""Bodies of the users, roles and permissions routes (Lakekeeper's shapes, kebab-case)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

import msgspec


class AccessRequest(msgspec.Struct, rename="kebab", forbid_unknown_fields=True, kw_only=True):
    pass


class AccessResponse(msgspec.Struct, rename="kebab", kw_only=True):
    pass


class CreateUserRequest(AccessRequest):
    id: str | None = None
    name: str | None = None
    email: str | None = None
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
    name: str
    description: str | None = None
    project_id: uuid.UUID | None = None


class UpdateRoleRequest(AccessRequest):
    name: str
    description: str | None = None


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
