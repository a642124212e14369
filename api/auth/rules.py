"""Authorization declared on each route: `opt=requires(rule)` beside the route, read by one guard.

A rule is a small coroutine deciding on the object the route acts on (builtin authorizer only); the rules
of the two APIs live beside their routes (api/catalog/rules.py, api/management/rules.py). A route that
declares no rule is refused, whoever asks: adding a route without deciding who may call it fails closed.
Listings are filtered in their handlers (api/auth/listing_filter.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from litestar.connection import ASGIConnection
from litestar.exceptions import SerializationException
from litestar.handlers import HTTPRouteHandler
from litestar.handlers.base import BaseRouteHandler

from api.as_of_prefix import split_prefix
from api.auth.access_audit import READS, REFUSALS, record_read, record_refusal
from api.auth.authorizer import Authorizer
from api.auth.principal import Principal, request_principal
from api.container import services
from catalog_es.errors import (
    BadRequestError,
    NoSuchNamespaceError,
    NoSuchWarehouseError,
    NotAuthorizedError,
)
from catalog_es.identifiers import Namespace
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.database import Connection
from catalog_es.tabular_kind import TABLE, TabularKind
from projections.catalog.queries import CatalogReadModel

RULE = "rule"
"""The key of a route's `opt` that holds its rule."""
PREFLIGHT = "preflight_rule"
"""The key of a layer's `opt` (app, router) that holds the rule of the `OPTIONS` answers Litestar adds to its routes."""


class Check:
    """What one request needs; resolved lazily against the read model on one connection."""

    def __init__(self, conn: Connection, authz: Authorizer, principal: Principal, read_model: CatalogReadModel) -> None:
        self.conn, self.authz, self.principal, self.read_model = conn, authz, principal, read_model

    async def warehouse(self, prefix: str, privilege: str | None = None) -> uuid.UUID:
        """An as-of prefix (`<id>@<position>`) needs describe on the whole warehouse: its past is not filtered."""
        not_found = NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist")
        base, position = split_prefix(prefix)
        try:
            warehouse_id = uuid.UUID(base)
        except ValueError:
            raise not_found from None
        if position is not None and privilege is None:
            privilege = "describe"
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
        kind: TabularKind,
        creating: bool = False,
    ) -> None:
        """`creating`: a staged create's commit (`assert-create`), which makes the table if it does not exist."""
        lookup = self.read_model.table_head if kind is TABLE else self.read_model.view  # a table's id, not its document
        row = await lookup(self.conn, warehouse_id, namespace, name)
        if row is None:
            if creating:
                await self.namespace(warehouse_id, namespace, "create")
            return  # otherwise the handler answers "does not exist", whoever may see the namespace
        await self.authz.require(self.conn, self.principal, row.id, privilege, kind.missing(namespace, name))


Rule = Callable[[Check, dict[str, Any], ASGIConnection[Any, Any, Any, Any]], Awaitable[None]]


def requires(rule: Rule) -> dict[str, Rule]:
    """A route's `opt`: `@get(..., opt=requires(on_namespace("create")))`."""
    return {RULE: rule}


def preflight(rule: Rule) -> dict[str, Rule]:
    """A layer's `opt`: who may ask its routes which methods they allow (Litestar's generated `OPTIONS`)."""
    return {PREFLIGHT: rule}


async def read_body(connection: ASGIConnection[Any, Any, Any, Any], kind: type[msgspec.Struct]) -> Any:
    """The request body as the handler will see it: the document the body check decoded (`Request.json()`),
    converted as Litestar converts the handler's `data` (leniently: `"true"` is a bool). Never decoded again.

    Raises: BadRequestError when it cannot be decoded. A check is never skipped for a body the guard could
    not read: a strict decode here once skipped the overwrite check of a body the handler then accepted.
    """
    try:
        document = await connection.json()  # type: ignore[attr-defined]
        return msgspec.convert(document, kind, strict=False, str_keys=True)
    except (SerializationException, msgspec.ValidationError, RecursionError) as exc:
        raise BadRequestError(f"Malformed request body: {exc}") from None


async def anyone(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Open to every caller the authentication layer let in (public pages, the caller's own identity)."""


async def filtered_listing(
    check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    """Open to every caller; the handler lists only what they may see (`RequestScope.access`, listing_filter.py)."""


async def in_handler(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """The S3 signer only (api/catalog/sign.py): its object is found from the signed URL by the warehouse's signer,
    and every refusal, whatever its cause, is the same 403 recorded with the S3 method and URL."""


async def server_operator(check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Server admins and operators only."""
    if not await check.authz.allowed(check.conn, check.principal, SERVER_OBJECT_ID, "operator"):
        raise NotAuthorizedError("Only a server admin or operator may do this")


_NO_CHECK = (anyone, filtered_listing, in_handler)  # decided without a connection


def rule_of(handler: BaseRouteHandler) -> Rule | None:
    """The route's own rule; for an `OPTIONS` answer Litestar generated, the rule its layer declares."""
    generated = (
        isinstance(handler, HTTPRouteHandler)
        and handler.http_methods == {"OPTIONS"}
        and handler.fn.__module__.startswith("litestar.")
    )
    rule: Rule | None = handler.opt.get(PREFLIGHT if generated else RULE)
    return rule


async def authorize(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """The app-wide guard. Raises: the not-found error of the object, or NotAuthorizedError (403)."""
    state = connection.app.state
    authz: Authorizer = services(state).authorizer
    if not authz.enabled:
        return
    rule = rule_of(handler)
    if rule is None:
        raise NotAuthorizedError("This route declares no authorization rule")
    if rule in _NO_CHECK:
        return
    principal = request_principal(connection.scope)
    async with services(state).ctx.store.connection() as conn:
        try:
            await rule(
                Check(conn, authz, principal, services(state).read_model), dict(connection.path_params), connection
            )
        except REFUSALS as refusal:
            await record_refusal(conn, connection, principal, handler.handler_name, refusal)
            raise
        if handler.handler_name in READS and services(state).settings.audit_reads:
            await record_read(conn, connection, principal, handler.handler_name)
