"""Who may declare and read maintenance policies and health: decided on the object the route names."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.connection import ASGIConnection

from api.auth.rules import Check, Rule
from catalog_es.errors import CatalogError, NoSuchNamespaceError, NoSuchTableError
from catalog_es.maintenance.jobs import PolicyLevel
from projections.permissions import queries as permissions_queries


def _not_found(kind: PolicyLevel, object_id: object) -> CatalogError:
    if kind == "namespace":
        return NoSuchNamespaceError(f"Namespace {object_id} does not exist")
    return NoSuchTableError(f"Table {object_id} does not exist")


def on_maintained_object(kind: PolicyLevel, privilege: str) -> Rule:
    """`privilege` on the warehouse, or on the namespace / table the path names inside it. An object of another
    kind, outside the warehouse, or hidden from the caller answers as a missing one."""

    async def rule(check: Check, params: dict[str, Any], _: ASGIConnection[Any, Any, Any, Any]) -> None:
        warehouse_id = await check.warehouse(str(params["warehouse_id"]), None if kind != "warehouse" else privilege)
        if kind == "warehouse":
            return
        object_id = uuid.UUID(str(params[f"{kind}_id"]))
        not_found = _not_found(kind, object_id)
        if await permissions_queries.object_kind(check.conn, object_id) != kind or not (
            await permissions_queries.is_inside(check.conn, object_id, warehouse_id)
        ):
            raise not_found
        await check.authz.require(check.conn, check.principal, object_id, privilege, not_found)

    return rule
