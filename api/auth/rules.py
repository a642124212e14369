"""One guard for every route: which privilege on which object each operation needs (builtin authorizer only).

Routes are matched by handler name; an unknown route under /catalog or /management needs a server admin or
operator, so a route added without a rule fails closed. Listings are filtered in their handlers
(api/auth/listing_filter.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from api.auth.authorizer import Authorizer
from api.auth.principal import Principal, request_principal
from api.auth.target import creation_project
from api.catalog.wire import CommitTransactionRequest, CreateNamespaceRequest, RegisterTableRequest, RenameTableRequest
from api.container import services
from api.dependencies import parse_namespace, parse_parent, project_id_of, split_warehouse_name
from api.encoded_slash import decode_name
from api.management.wire import CreateWarehouseRequest, UpdateStorageRequest
from catalog_es.errors import (
    BadRequestError,
    CatalogError,
    NoSuchNamespaceError,
    NoSuchProjectError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchWarehouseError,
    NotAuthorizedError,
)
from catalog_es.identifiers import Namespace
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.database import Connection
from projections.catalog.queries import CatalogReadModel


class _Check:
    """What one request needs; resolved lazily against the read model on one connection."""

    def __init__(self, conn: Connection, authz: Authorizer, principal: Principal, read_model: CatalogReadModel) -> None:
        self.conn, self.authz, self.principal, self.read_model = conn, authz, principal, read_model

    async def warehouse(self, prefix: str, privilege: str | None = None) -> uuid.UUID:
        not_found = NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist")
        try:
            warehouse_id = uuid.UUID(prefix)
        except ValueError:
            raise not_found from None
        if privilege:
            await self.authz.require(self.conn, self.principal, warehouse_id, privilege, not_found)
        else:
            await self.authz.require_visible(self.conn, self.principal, warehouse_id, not_found)
        return warehouse_id

    async def namespace(self, warehouse_id: uuid.UUID, namespace: Namespace, privilege: str | None) -> None:
        row = await self.read_model.namespace(self.conn, warehouse_id, namespace)
        if row is None:
            return  # the handler answers "does not exist" itself
        not_found = NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        if privilege:
            await self.authz.require(self.conn, self.principal, row.id, privilege, not_found)
        else:
            await self.authz.require_visible(self.conn, self.principal, row.id, not_found)

    async def container(self, warehouse_id: uuid.UUID, namespace: Namespace | None, privilege: str | None) -> None:
        """A namespace, or the warehouse itself for a top-level one."""
        if namespace is None or not namespace.parts:
            if privilege:
                message = f"Warehouse {str(warehouse_id)!r} does not exist"
                await self.authz.require(
                    self.conn, self.principal, warehouse_id, privilege, NoSuchWarehouseError(message)
                )
            return
        await self.namespace(warehouse_id, namespace, privilege)

    async def tabular(
        self,
        warehouse_id: uuid.UUID,
        namespace: Namespace,
        name: str,
        privilege: str,
        *,
        view: bool,
        creating: bool = False,
    ) -> None:
        """`creating`: a staged create's commit (`assert-create`), which makes the table if it does not exist."""
        lookup = self.read_model.view if view else self.read_model.table
        row = await lookup(self.conn, warehouse_id, namespace, name)
        if row is None:
            if creating:
                await self.namespace(warehouse_id, namespace, "create")
            return  # otherwise the handler answers "does not exist", whoever may see the namespace
        error: CatalogError = (
            NoSuchViewError(f"View does not exist: {namespace}.{name}")
            if view
            else NoSuchTableError(f"Table does not exist: {namespace}.{name}")
        )
        await self.authz.require(self.conn, self.principal, row.id, privilege, error)


Rule = Callable[[_Check, dict[str, Any], ASGIConnection[Any, Any, Any, Any]], Awaitable[None]]


def _ns(params: dict[str, Any]) -> Namespace:
    return parse_namespace(str(params["namespace"]))


async def _body(connection: ASGIConnection[Any, Any, Any, Any], kind: type[msgspec.Struct]) -> Any:
    """The request body as the handler will see it (Litestar converts leniently: `"true"` is a bool).

    Raises: BadRequestError when it cannot be decoded. A check is never skipped for a body the guard could
    not read: a strict decode here once skipped the overwrite check of a body the handler then accepted.
    """
    body = await connection.body()  # type: ignore[attr-defined]
    try:
        try:
            return msgspec.json.decode(body, type=kind)  # the fast path: what a well-behaved client sends
        except msgspec.ValidationError:
            return msgspec.convert(msgspec.json.decode(body), kind, strict=False, str_keys=True)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise BadRequestError(f"Malformed request body: {exc}") from None


def _on_namespace(privilege: str | None) -> Rule:
    async def rule(check: _Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(params["prefix"])
        await check.namespace(warehouse_id, _ns(params), privilege)

    return rule


def _on_tabular(privilege: str, *, view: bool) -> Rule:
    async def rule(check: _Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(params["prefix"])
        key = "view" if view else "table"
        await check.tabular(warehouse_id, _ns(params), decode_name(str(params[key])), privilege, view=view)

    return rule


async def _config(check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    value = connection.query_params.get("warehouse")
    if not value:
        return
    project_id, name = split_warehouse_name(value, project_id_of(connection, services(connection.app.state).settings))
    row = await check.read_model.warehouse_by_name(check.conn, project_id, name)
    if row is not None:
        not_found = NoSuchWarehouseError(f"Warehouse {value!r} does not exist")
        await check.authz.require_visible(check.conn, check.principal, row.id, not_found)


async def _list_namespaces(
    check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    parent = connection.query_params.get("parent")
    if parent:
        await check.namespace(warehouse_id, parse_parent(parent), None)


async def _create_namespace(
    check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    request = await _body(connection, CreateNamespaceRequest)
    if request.namespace:
        await check.container(warehouse_id, Namespace(tuple(request.namespace)).parent, "create")


async def _register_table(
    check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    """Create in the namespace; overwriting an existing table's pointer also needs modify on that table."""
    warehouse_id = await check.warehouse(params["prefix"])
    namespace = _ns(params)
    await check.namespace(warehouse_id, namespace, "create")
    request = await _body(connection, RegisterTableRequest)
    if request.overwrite:
        await check.tabular(warehouse_id, namespace, request.name, "modify", view=False)


def _rename(*, view: bool) -> Rule:
    async def rule(check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(params["prefix"])
        request = await _body(connection, RenameTableRequest)
        source = Namespace(tuple(request.source.namespace))
        await check.tabular(warehouse_id, source, request.source.name, "modify", view=view)
        await check.namespace(warehouse_id, Namespace(tuple(request.destination.namespace)), "create")

    return rule


async def _transaction(check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    request = await _body(connection, CommitTransactionRequest)
    for change in request.table_changes:
        if change.identifier is not None:
            namespace = Namespace(tuple(change.identifier.namespace))
            await check.tabular(warehouse_id, namespace, change.identifier.name, "modify", view=False)


def _on_project(privilege: str | None) -> Rule:
    async def rule(check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        project_id = project_id_of(connection, services(connection.app.state).settings)
        not_found = NoSuchProjectError(f"Project {project_id} does not exist")
        if privilege:
            await check.authz.require(check.conn, check.principal, project_id, privilege, not_found)
        else:
            await check.authz.require_visible(check.conn, check.principal, project_id, not_found)

    return rule


async def _create_warehouse(
    check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    """`create` on the project the warehouse will be created in (see api/auth/target.py)."""
    request = await _body(connection, CreateWarehouseRequest)
    project_id = creation_project(connection, request.project_id)
    not_found = NoSuchProjectError(f"Project {project_id} does not exist")
    await check.authz.require(check.conn, check.principal, project_id, "create", not_found)


def _on_warehouse(privilege: str | None) -> Rule:
    async def rule(check: _Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        await check.warehouse(str(params["warehouse_id"]), privilege)

    return rule


async def _anyone(check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Open to every authenticated caller (the handler checks what it needs itself)."""


async def _server_operator(
    check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    """Server admins and operators only (also every route without a rule of its own)."""
    if not await check.authz.allowed(check.conn, check.principal, SERVER_OBJECT_ID, "operator"):
        raise NotAuthorizedError("Only a server admin or operator may do this")


def _file_storage_by_operator(rule: Rule, request_kind: type[CreateWarehouseRequest | UpdateStorageRequest]) -> Rule:
    """`rule`, and for a `file` storage profile also a server admin or operator: a file warehouse reaches the
    server's own disk, so which directories it may use is the server's decision, not a project's."""

    async def checked(check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        await rule(check, params, connection)
        request = await _body(connection, request_kind)
        if request.storage_profile.get("type") != "file":
            return  # any other profile needs `rule` alone
        if not await check.authz.allowed(check.conn, check.principal, SERVER_OBJECT_ID, "operator"):
            raise NotAuthorizedError("Only a server admin or operator may create or re-point a file warehouse")

    return checked


async def _commit_table(check: _Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    request = await _body(connection, _Requirements)
    creating = any(r.get("type") == "assert-create" for r in request.requirements)
    name = decode_name(str(params["table"]))
    await check.tabular(warehouse_id, _ns(params), name, "modify", view=False, creating=creating)


async def _metrics_report(check: _Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Only the warehouse: the handler drops a report on a table the caller may not describe, or that is missing."""
    await check.warehouse(params["prefix"])


class _Requirements(msgspec.Struct):
    requirements: list[dict[str, Any]] = []


RULES: dict[str, Rule] = {
    "get_config": _config,
    "list_namespaces": _list_namespaces,
    "create_namespace": _create_namespace,
    "load_namespace": _on_namespace(None),
    "namespace_exists": _on_namespace(None),
    "drop_namespace": _on_namespace("modify"),
    "update_properties": _on_namespace("modify"),
    "list_tables": _on_namespace(None),
    "list_views": _on_namespace(None),
    "create_table": _on_namespace("create"),
    "register_table": _register_table,
    "create_view": _on_namespace("create"),
    "register_view": _on_namespace("create"),
    "load_table": _on_tabular("describe", view=False),
    "table_exists": _on_tabular("describe", view=False),
    "report_metrics": _metrics_report,
    "commit_table": _commit_table,
    "drop_table": _on_tabular("modify", view=False),
    "load_view": _on_tabular("describe", view=True),
    "view_exists": _on_tabular("describe", view=True),
    "replace_view": _on_tabular("modify", view=True),
    "drop_view": _on_tabular("modify", view=True),
    "rename_table": _rename(view=False),
    "rename_view": _rename(view=True),
    "commit_transaction": _transaction,
    # Management: these check per object inside the handler, or are open to every authenticated caller.
    "bootstrap": _anyone,
    "server_info": _anyone,
    "whoami": _anyone,
    "create_project": _server_operator,
    "list_projects": _server_operator,  # not filtered per project yet: operators only
    "get_project": _on_project(None),
    "rename_project": _on_project("project_admin"),
    "delete_project": _on_project("project_admin"),
    "create_warehouse": _file_storage_by_operator(_create_warehouse, CreateWarehouseRequest),
    "list_warehouses": _on_project("describe"),  # lists every warehouse of the project: needs describe on it
    "get_warehouse": _on_warehouse(None),
    "delete_warehouse": _on_warehouse("modify"),
    "rename_warehouse": _on_warehouse("modify"),
    "deactivate_warehouse": _on_warehouse("modify"),
    "activate_warehouse": _on_warehouse("modify"),
    "update_storage": _file_storage_by_operator(_on_warehouse("modify"), UpdateStorageRequest),
    "update_credential": _on_warehouse("modify"),
    "update_delete_profile": _on_warehouse("modify"),
    "metrics": _server_operator,  # GET /metrics; an open scrape listener is CATALOG_ES__METRICS__PORT
    # The console's shell, its public config and `/` (api/console) hold no data: its pages read through the
    # rules above with the user's token. Listed so they stay public should the guard ever cover every path.
    "console_redirect": _anyone,
    "console_index": _anyone,
    "console_config": _anyone,
}
# Handlers of api/management/{users,roles,permissions}.py enforce their own rules.
SELF_CHECKING_PREFIX = "authz_"


async def authorize(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """The app-wide guard. Raises: the not-found error of the object, or NotAuthorizedError (403)."""
    state = connection.app.state
    authz: Authorizer = services(state).authorizer
    path = connection.scope["path"]
    if not authz.enabled or not (path.startswith(("/catalog/", "/management/")) or path == "/metrics"):
        return
    name = handler.handler_name
    if name.startswith(SELF_CHECKING_PREFIX):
        return
    rule = RULES.get(name, _server_operator)
    principal = request_principal(connection.scope)
    async with services(state).ctx.store.connection() as conn:
        await rule(_Check(conn, authz, principal, services(state).read_model), dict(connection.path_params), connection)
