"""Who may undrop and restore: `modify` on each object acted on (its grants outlive a soft drop); hidden = missing."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.connection import ASGIConnection

from api.auth.rules import Check, read_body
from api.management.deleted_wire import UndropTabularsRequest
from catalog_es.errors import (
    CatalogError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchWarehouseError,
)

_MISSING: dict[str, type[CatalogError]] = {
    "table": NoSuchTableError,
    "view": NoSuchViewError,
    "namespace": NoSuchNamespaceError,
}


async def on_undrop_targets(
    check: Check, params: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
) -> None:
    """The warehouse must be visible, and every target one the caller may modify (as dropping it needed)."""
    await check.warehouse(str(params["warehouse_id"]))
    request: UndropTabularsRequest = await read_body(connection, UndropTabularsRequest)
    for target in request.targets:
        not_found = _MISSING[target.type](f"No soft-dropped {target.type} with id {target.id}")
        await check.authz.require(check.conn, check.principal, target.id, "modify", not_found)


async def on_live_table(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
    """Restoring a pointer is a commit: `modify` on the table."""
    await check.warehouse(str(params["warehouse_id"]))
    table_id: uuid.UUID = params["table_id"]
    not_found = NoSuchTableError(f"Table {table_id} does not exist")
    await check.authz.require(check.conn, check.principal, table_id, "modify", not_found)


async def on_held_warehouse(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
    """`modify` on the warehouse, as deleting it needed (its object and grants outlive the hold)."""
    warehouse_id: uuid.UUID = params["warehouse_id"]
    not_found = NoSuchWarehouseError(f"No deleted warehouse {warehouse_id} is held")
    await check.authz.require(check.conn, check.principal, warehouse_id, "modify", not_found)
