"""Who may call each management route: the rules its decorators declare (`opt=requires(...)`)."""

from __future__ import annotations

from typing import Any

from litestar.connection import ASGIConnection

from api.auth.rules import Check, Rule, read_body
from api.auth.target import creation_project
from api.container import services
from api.management.access_checks import not_found
from api.management.wire import CreateWarehouseRequest, UpdateCredentialRequest, UpdateStorageRequest
from api.project_header import project_id_of
from catalog_es.errors import NoSuchProjectError, NoSuchWarehouseError, NotAuthorizedError
from catalog_es.events.access import ObjectKind
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.storage.profiles import system_identity_of
from projections.permissions import queries as permissions_queries


def on_project(privilege: str | None) -> Rule:
    async def rule(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        project_id = project_id_of(connection, services(connection.app.state).settings)
        not_found = NoSuchProjectError(f"Project {project_id} does not exist")
        if privilege:
            await check.authz.require(check.conn, check.principal, project_id, privilege, not_found)
        else:
            await check.authz.require_visible(check.conn, check.principal, project_id, not_found)

    return rule


async def new_warehouse_project(
    check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    """`create` on the project the warehouse will be created in (see api/auth/target.py)."""
    request = await read_body(connection, CreateWarehouseRequest)
    project_id = creation_project(connection, request.project_id)
    not_found = NoSuchProjectError(f"Project {project_id} does not exist")
    await check.authz.require(check.conn, check.principal, project_id, "create", not_found)


def on_warehouse(privilege: str | None) -> Rule:
    async def rule(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(str(params["warehouse_id"]), privilege)
        # A warehouse held after a forced deletion keeps its grants, yet is missing (commands/warehouse_hold.py).
        if await check.read_model.warehouse_by_id(check.conn, warehouse_id) is None:
            raise NoSuchWarehouseError(f"Warehouse {warehouse_id} does not exist")

    return rule


def on_object_in_warehouse(kind: ObjectKind, privilege: str | None) -> Rule:
    """`privilege` (None: seeing it) on the namespace, table or view `{object_id}` of the visible warehouse
    `{warehouse_id}`; an object of another kind or warehouse answers exactly as a missing one."""

    async def rule(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(str(params["warehouse_id"]))
        object_id = params["object_id"]
        missing = not_found(kind, object_id)
        if await permissions_queries.object_kind(check.conn, object_id) != kind or not (
            await permissions_queries.is_inside(check.conn, object_id, warehouse_id)
        ):
            raise missing
        if privilege:
            await check.authz.require(check.conn, check.principal, object_id, privilege, missing)
        else:
            await check.authz.require_visible(check.conn, check.principal, object_id, missing)

    return rule


def storage_by_operator(
    rule: Rule, request_kind: type[CreateWarehouseRequest | UpdateStorageRequest | UpdateCredentialRequest]
) -> Rule:
    """`rule`, and for what reaches the server's own resources also a server admin or operator: a `file` storage
    profile (the server's disk: which directories it may use is the server's decision, not a project's) and a
    system-identity credential (the server's own cloud identity, which the operator must also have enabled)."""

    async def checked(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        await rule(check, params, connection)
        request = await read_body(connection, request_kind)
        if isinstance(request, UpdateCredentialRequest):
            profile, credential = None, request.new_storage_credential
        else:
            profile, credential = request.storage_profile, request.storage_credential
        identity = system_identity_of(credential)
        services(connection.app.state).settings.endpoint_policy.check_system_identity(identity)  # 400 when off
        if identity is None and (profile is None or profile.get("type") != "file"):
            return  # anything else needs `rule` alone
        if not await check.authz.allowed(check.conn, check.principal, SERVER_OBJECT_ID, "operator"):
            what = (
                "create or re-point a file warehouse" if identity is None else f"use the server's {identity} identity"
            )
            raise NotAuthorizedError(f"Only a server admin or operator may {what}")

    return checked
