"""Refusals by the authorization guard, recorded in the access audit log (who, what, when, and why not)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar.connection import ASGIConnection

from api.auth.principal import Principal
from catalog_es.access_log import AccessRecord, record_access
from catalog_es.database import Connection
from catalog_es.errors import (
    CatalogError,
    ForbiddenError,
    NoSuchNamespaceError,
    NoSuchProjectError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchWarehouseError,
)

# What a guard rule raises when it refuses: 403, or the not-found answer of an object the caller may not see.
REFUSALS: tuple[type[CatalogError], ...] = (
    ForbiddenError,
    NoSuchWarehouseError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchProjectError,
)


async def record_refusal(
    conn: Connection,
    connection: ASGIConnection[Any, Any, Any, Any],
    principal: Principal,
    operation: str,
    refusal: CatalogError,
) -> None:
    """`hidden` for a 404: the object is missing or not for this caller (the log tells the auditor, not the caller)."""
    forbidden = isinstance(refusal, ForbiddenError)
    record = AccessRecord(
        time=datetime.now(UTC),
        actor=principal.user_id,
        request_id=connection.scope.get("state", {}).get("request_id"),
        decision="denied" if forbidden else "hidden",
        status=403 if forbidden else 404,
        method=str(connection.scope.get("method", "")),
        path=connection.scope["path"],
        operation=operation,
        reason=str(refusal),
    )
    await record_access(conn, record)
