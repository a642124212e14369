"""Who may call each catalog route: the rules its decorators declare (`opt=requires(...)`)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.connection import ASGIConnection

from api.as_of_prefix import split_warehouse_value
from api.auth.rules import Check, Rule, read_body
from api.catalog.wire import CommitTransactionRequest, CreateNamespaceRequest, RegisterTableRequest, RenameTableRequest
from api.container import services
from api.dependencies import parse_namespace, parse_parent, split_warehouse_name
from api.encoded_slash import decode_name
from api.project_header import project_id_of
from catalog_es.errors import NoSuchWarehouseError, NotAuthorizedError
from catalog_es.identifiers import Namespace
from catalog_es.tabular_kind import TABLE, TabularKind


def _ns(params: dict[str, Any]) -> Namespace:
    return parse_namespace(str(params["namespace"]))


def on_namespace(privilege: str | None) -> Rule:
    async def rule(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(params["prefix"])
        await check.namespace(warehouse_id, _ns(params), privilege)

    return rule


def on_tabular(privilege: str, kind: TabularKind) -> Rule:
    """On the table or view the path names (its parameter is the kind's name)."""

    async def rule(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(params["prefix"])
        await check.tabular(warehouse_id, _ns(params), decode_name(str(params[kind.name])), privilege, kind=kind)

    return rule


_NOT_FORCED = frozenset({"", "false", "0", "no", "off"})


def forcing(rule: Rule) -> Rule:
    """`rule`, and with `force` (any value but a false one: fail closed) also `modify` on the warehouse.

    Forcing a drop overrides protection, which is the warehouse's decision, not the dropped object's: a table's
    owner may drop it, but only who may modify the whole warehouse (its owners, project and server admins) may
    drop it while it is protected.
    """

    async def checked(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        await rule(check, params, connection)
        if str(connection.query_params.get("force", "")).lower() in _NOT_FORCED:
            return
        warehouse_id = await check.warehouse(params["prefix"])
        if not await check.authz.allowed(check.conn, check.principal, warehouse_id, "modify"):
            raise NotAuthorizedError("Dropping with force=true needs modify on the warehouse")

    return checked


async def configured_warehouse(
    check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    value = connection.query_params.get("warehouse")
    if not value:
        return
    value, as_of = split_warehouse_value(value)
    project_id, name = split_warehouse_name(value, project_id_of(connection, services(connection.app.state).settings))
    row = await check.read_model.warehouse_by_name(check.conn, project_id, name)
    if row is not None:
        not_found = NoSuchWarehouseError(f"Warehouse {value!r} does not exist")
        if as_of is not None:  # the past is not filtered per object: it needs describe on the whole warehouse
            await check.authz.require(check.conn, check.principal, row.id, "describe", not_found)
        else:
            await check.authz.require_visible(check.conn, check.principal, row.id, not_found)


async def listed_parent(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    parent = connection.query_params.get("parent")
    if parent:
        await check.namespace(warehouse_id, parse_parent(parent), None)


async def new_namespace_parent(
    check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    request = await read_body(connection, CreateNamespaceRequest)
    if request.namespace:
        await check.container(warehouse_id, Namespace(tuple(request.namespace)).parent, "create")


async def registered_table(
    check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    """Create in the namespace; overwriting an existing table's pointer also needs modify on that table."""
    warehouse_id = await check.warehouse(params["prefix"])
    namespace = _ns(params)
    await check.namespace(warehouse_id, namespace, "create")
    request = await read_body(connection, RegisterTableRequest)
    if request.overwrite:
        await check.tabular(warehouse_id, namespace, request.name, "modify", kind=TABLE)


def renamed(kind: TabularKind) -> Rule:
    async def rule(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(params["prefix"])
        request = await read_body(connection, RenameTableRequest)
        source = Namespace(tuple(request.source.namespace))
        await check.tabular(warehouse_id, source, request.source.name, "modify", kind=kind)
        await check.namespace(warehouse_id, Namespace(tuple(request.destination.namespace)), "create")

    return rule


async def transaction_tables(
    check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    request = await read_body(connection, CommitTransactionRequest)
    for change in request.table_changes:
        if change.identifier is not None:
            namespace = Namespace(tuple(change.identifier.namespace))
            await check.tabular(warehouse_id, namespace, change.identifier.name, "modify", kind=TABLE)


async def committed_table(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    warehouse_id = await check.warehouse(params["prefix"])
    request = await read_body(connection, _Requirements)
    creating = any(r.get("type") == "assert-create" for r in request.requirements)
    name = decode_name(str(params["table"]))
    await check.tabular(warehouse_id, _ns(params), name, "modify", kind=TABLE, creating=creating)


def on_warehouse(privilege: str) -> Rule:
    """A privilege on the warehouse itself (the events feed: `read_events`; which events, the handler filters)."""

    async def rule(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        await check.warehouse(params["prefix"], privilege)

    return rule


async def metrics_warehouse(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Only the warehouse: the handler drops a report on a table the caller may not describe, or that is missing."""
    await check.warehouse(params["prefix"])


class _Requirements(msgspec.Struct):
    requirements: list[dict[str, Any]] = []


async def on_warehouse_only(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Scan planning: the warehouse here; the handler resolves the table once and decides `select` on that row
    (missing and hidden answer alike), so the check and the plan are about the same table."""
    await check.warehouse(params["prefix"])
