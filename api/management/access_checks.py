"""Resolving the object of a permissions route and deciding who may read or change its assignments."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.connection import ASGIConnection

from api.auth.authorizer import Authorizer
from api.auth.principal import Principal
from api.container import services
from api.management.wire import Assignment
from api.project_header import project_id_of
from catalog_es.errors import (
    BadRequestError,
    CatalogError,
    NoSuchNamespaceError,
    NoSuchProjectError,
    NoSuchRoleError,
    NoSuchTableError,
    NoSuchUserError,
    NoSuchViewError,
    NoSuchWarehouseError,
    NotAuthorizedError,
)
from catalog_es.events.access import ObjectKind
from catalog_es.privileges import SERVER_OBJECT_ID, role_principal, user_principal
from catalog_es.store.database import Connection
from projections.permissions import queries as permissions_queries

_NOT_FOUND: dict[str, type[CatalogError]] = {
    "project": NoSuchProjectError,
    "warehouse": NoSuchWarehouseError,
    "namespace": NoSuchNamespaceError,
    "table": NoSuchTableError,
    "view": NoSuchViewError,
    "role": NoSuchRoleError,
}


def not_found(kind: ObjectKind, object_id: uuid.UUID) -> CatalogError:
    return _NOT_FOUND.get(kind, NoSuchProjectError)(f"{kind.capitalize()} {object_id} does not exist")


async def visible_object(
    conn: Connection,
    authz: Authorizer,
    principal: Principal,
    kind: ObjectKind,
    object_id: uuid.UUID,
    container_id: uuid.UUID | None = None,
) -> None:
    """Raises: the kind's not-found error when the object does not exist, is not of that kind, lies outside
    `container_id` (the warehouse a `/warehouse/{w}/table/{t}` path names), or the caller may not see it.
    """
    if await permissions_queries.object_kind(conn, object_id) != kind:
        raise not_found(kind, object_id)
    if container_id is not None and not await permissions_queries.is_inside(conn, object_id, container_id):
        raise not_found(kind, object_id)
    await authz.require_visible(conn, principal, object_id, not_found(kind, object_id))


class PathObject:
    """The object a permissions path names: its kind, id, and the warehouse it must lie in (table and view paths)."""

    __slots__ = ("container_id", "kind", "object_id")

    def __init__(self, kind: ObjectKind, object_id: uuid.UUID, container_id: uuid.UUID | None = None) -> None:
        self.kind, self.object_id, self.container_id = kind, object_id, container_id


def path_object(connection: ASGIConnection[Any, Any, Any, Any]) -> PathObject:
    """`.../permissions/<kind>/<id>/...`, `.../warehouse/<w>/<kind>/<id>/...`, the server, or the header's project.

    The rule and the handler of a route both read it here, so they name the same object. Raises: BadRequestError
    (the project routes: see `project_id_of`).
    """
    parts = connection.url.path.split("/permissions/", 1)[1].split("/")
    params = connection.path_params
    if "object_id" not in params:
        if parts[0] == "server":
            return PathObject("server", SERVER_OBJECT_ID)
        return PathObject("project", project_id_of(connection, services(connection.app.state).settings))
    # The routes admit only object kinds in these places.
    kind: ObjectKind = parts[2] if parts[0] == "warehouse" and len(parts) > 3 else parts[0]  # type: ignore[assignment]
    container = params.get("warehouse_id")
    return PathObject(kind, params["object_id"], container if isinstance(container, uuid.UUID) else None)


def principal_of(assignment: Assignment) -> str:
    """Raises: BadRequestError unless exactly one of `user` and `role` is given."""
    if (assignment.user is None) == (assignment.role is None):
        raise BadRequestError("An assignment names exactly one of `user` and `role`")
    return user_principal(assignment.user) if assignment.user is not None else role_principal(assignment.role)  # type: ignore[arg-type]


def read_policy_principal(user: str | None, role: uuid.UUID | None) -> str:
    """Raises: BadRequestError unless exactly one of them is given."""
    if (user is None) == (role is None):
        raise BadRequestError("A read policy names exactly one of `user` and `role`")
    return user_principal(user) if user is not None else role_principal(role)  # type: ignore[arg-type]


def assignment_of(principal: str, privilege: str) -> Assignment:
    kind, _, ident = principal.partition(":")
    if kind == "role":
        return Assignment(type=privilege, role=uuid.UUID(ident))
    return Assignment(type=privilege, user=ident)


async def require_principals_exist(
    conn: Connection, authz: Authorizer, principal: Principal, principals: list[str]
) -> None:
    """Raises: NoSuchUserError / NoSuchRoleError for a grantee that does not exist, or a role the caller may
    not see (another project's roles answer as missing ones: naming one is not a way to find it or link it).
    """
    for grantee in set(principals):
        kind, _, ident = grantee.partition(":")
        if kind == "user" and await permissions_queries.user(conn, ident) is None:
            raise NoSuchUserError(f"User {ident!r} does not exist")
        if kind == "role":
            role_id = uuid.UUID(ident)
            missing = NoSuchRoleError(f"Role {ident} does not exist")
            if await permissions_queries.role(conn, role_id) is None:
                raise missing
            await authz.require_visible(conn, principal, role_id, missing)


async def require_may_read(conn: Connection, authz: Authorizer, principal: Principal, object_id: uuid.UUID) -> None:
    for privilege in ("manage_grants", "pass_grants"):
        if await authz.allowed(conn, principal, object_id, privilege):
            return
    raise NotAuthorizedError("Reading assignments needs manage_grants or pass_grants on the object")


async def require_may_change(
    conn: Connection, authz: Authorizer, principal: Principal, object_id: uuid.UUID, privileges: set[str]
) -> None:
    """manage_grants grants anything; otherwise pass_grants passes on what the caller holds itself (not ownership).

    Raises: NotAuthorizedError.
    """
    if await authz.allowed(conn, principal, object_id, "manage_grants"):
        return
    if "ownership" not in privileges and await authz.allowed(conn, principal, object_id, "pass_grants"):
        for privilege in privileges:
            if not await authz.allowed(conn, principal, object_id, privilege):
                break
        else:
            return
    raise NotAuthorizedError("Changing these assignments needs manage_grants (or pass_grants and the privilege)")
