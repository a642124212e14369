"""Facts about users, roles and privileges: who exists, who holds what on which object, and since when."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from catalog_es.events.base import Event

# uuid5 namespace for user streams: user ids are strings (`oidc~<subject>`), streams are keyed by uuid.
_USER_STREAMS = uuid.UUID("6b0b9a4e-3d55-4f7e-9a43-0f3b1c1de5a1")

UserType = Literal["human", "application"]
LastUpdatedWith = Literal["create-endpoint", "config-call-creation", "update-endpoint", "role-provider"]
ObjectKind = Literal["server", "project", "warehouse", "namespace", "table", "view", "role"]


def user_stream_uuid(user_id: str) -> uuid.UUID:
    return uuid.uuid5(_USER_STREAMS, user_id)


class AccessEvent(Event, frozen=True, kw_only=True):
    """A change to identities or privileges; the catalog read models ignore these."""


class UserEvent(AccessEvent, frozen=True, kw_only=True):
    stream_kind = "user"
    user_id: str

    @property
    def entity_id(self) -> uuid.UUID:
        return user_stream_uuid(self.user_id)


class UserCreated(UserEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.user.created.v1"
    name: str
    email: str | None = None
    user_type: UserType = "application"
    last_updated_with: LastUpdatedWith = "create-endpoint"


class UserUpdated(UserEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.user.updated.v1"
    name: str
    email: str | None = None
    user_type: UserType = "application"
    last_updated_with: LastUpdatedWith = "update-endpoint"


class UserDeleted(UserEvent, frozen=True, kw_only=True):
    """The user is gone and so are all privileges granted to them."""

    type_name = "io.catalog-es.user.deleted.v1"


class RoleEvent(AccessEvent, frozen=True, kw_only=True):
    stream_kind = "role"
    role_id: uuid.UUID

    @property
    def entity_id(self) -> uuid.UUID:
        return self.role_id


class RoleCreated(RoleEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.role.created.v1"
    project_id: uuid.UUID
    name: str
    description: str | None = None


class RoleUpdated(RoleEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.role.updated.v1"
    name: str
    description: str | None = None


class RoleDeleted(RoleEvent, frozen=True, kw_only=True):
    """The role is gone: its members lose what it carried, grants to it are removed."""

    type_name = "io.catalog-es.role.deleted.v1"


class PrivilegeEvent(AccessEvent, frozen=True, kw_only=True):
    """One relation between a principal (`user:<id>` or `role:<uuid>`) and an object; one stream per object."""

    stream_kind = "acl"
    object_kind: ObjectKind
    object_id: uuid.UUID
    principal: str
    privilege: str

    @property
    def entity_id(self) -> uuid.UUID:
        return self.object_id


class PrivilegeGranted(PrivilegeEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.privilege.granted.v1"


class PrivilegeRevoked(PrivilegeEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.privilege.revoked.v1"


class ManagedAccessSet(AccessEvent, frozen=True, kw_only=True):
    """Managed access on a warehouse or namespace: owners below it may no longer grant."""

    type_name = "io.catalog-es.managed-access.set.v1"
    stream_kind = "acl"
    object_kind: Literal["warehouse", "namespace"]
    object_id: uuid.UUID
    enabled: bool

    @property
    def entity_id(self) -> uuid.UUID:
        return self.object_id


class ReadPolicyEvent(AccessEvent, frozen=True, kw_only=True):
    """A read policy of one principal (`user:<id>` or `role:<uuid>`) on one table (issue 33); the table's acl stream."""

    stream_kind = "acl"
    table_id: uuid.UUID
    principal: str

    @property
    def entity_id(self) -> uuid.UUID:
        return self.table_id


class ReadPolicySet(ReadPolicyEvent, frozen=True, kw_only=True):
    """Planning for the principal reads only rows matching `row_filter` (the spec's JSON expression; None: all)
    and only the `columns` named (None: all); it replaces the principal's previous policy on the table."""

    type_name = "io.catalog-es.read-policy.set.v1"
    row_filter: Any = None
    columns: list[str] | None = None


class ReadPolicyRemoved(ReadPolicyEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.read-policy.removed.v1"


class ServicePrincipalEvent(AccessEvent, frozen=True, kw_only=True):
    """A service principal: a client id and secret for the catalog's own OAuth2 endpoint, acting as user
    `user_id`. Secrets and their hashes never appear here: an event carries at most the secret's version."""

    stream_kind = "service-principal"
    client_id: uuid.UUID

    @property
    def entity_id(self) -> uuid.UUID:
        return self.client_id


class ServicePrincipalCreated(ServicePrincipalEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.service-principal.created.v1"
    user_id: str
    name: str
    key_version: int = 1


class ServicePrincipalSecretRotated(ServicePrincipalEvent, frozen=True, kw_only=True):
    """A new secret (version `key_version`) replaced the old one; tokens issued under older versions are refused."""

    type_name = "io.catalog-es.service-principal.secret-rotated.v1"
    key_version: int


class ServicePrincipalRevoked(ServicePrincipalEvent, frozen=True, kw_only=True):
    """No further tokens, and tokens already issued are refused; final (create a new principal instead)."""

    type_name = "io.catalog-es.service-principal.revoked.v1"


SERVICE_PRINCIPAL_EVENTS: tuple[type[Event], ...] = (
    ServicePrincipalCreated,
    ServicePrincipalSecretRotated,
    ServicePrincipalRevoked,
)
ACCESS_EVENTS: tuple[type[Event], ...] = (
    UserCreated,
    UserUpdated,
    UserDeleted,
    RoleCreated,
    RoleUpdated,
    RoleDeleted,
    PrivilegeGranted,
    PrivilegeRevoked,
    ManagedAccessSet,
    ReadPolicySet,
    ReadPolicyRemoved,
    *SERVICE_PRINCIPAL_EVENTS,
)
