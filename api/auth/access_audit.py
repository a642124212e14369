"""Refusals by the authorization guard, recorded in the access audit log (who, what, when, and why not)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar.connection import ASGIConnection

from api.auth.principal import Principal
from catalog_es.errors import (
    CatalogError,
    ForbiddenError,
    NoSuchNamespaceError,
    NoSuchProjectError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchWarehouseError,
)
from catalog_es.store.access_log import AccessRecord, record_access
from catalog_es.store.database import Connection

# Reads the guard records when `audit_reads` is on (the routes that hand out table and view metadata). Routes that
# decide in their handler (S3 signing, vended credentials) record through api.auth.audited instead.
READS = frozenset({"load_table", "load_view"})
# What a guard rule raises when it refuses: 403, or the not-found answer of an object the caller may not see.
REFUSALS: tuple[type[CatalogError], ...] = (
    ForbiddenError,
    NoSuchWarehouseError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NoSuchProjectError,
)


async def record_read(
    conn: Connection, connection: ASGIConnection[Any, Any, Any, Any], principal: Principal, operation: str
) -> None:
    """An allowed read: status 200 is the authorizer's answer (the handler may still find nothing there)."""
    await record_access(conn, _record(connection, principal, operation, "allowed", 200, "authorized"))


async def record_refusal(
    conn: Connection,
    connection: ASGIConnection[Any, Any, Any, Any],
    principal: Principal,
    operation: str,
    refusal: CatalogError,
) -> None:
    """`hidden` for a 404: the object is missing or not for this caller (the log tells the auditor, not the caller)."""
    forbidden = isinstance(refusal, ForbiddenError)
    decision, status = ("denied", 403) if forbidden else ("hidden", 404)
    await record_access(conn, _record(connection, principal, operation, decision, status, str(refusal)))


def _record(
    connection: ASGIConnection[Any, Any, Any, Any],
    principal: Principal,
    operation: str,
    decision: str,
    status: int,
    reason: str,
) -> AccessRecord:
    return AccessRecord(
        time=datetime.now(UTC),
        actor=principal.user_id,
        request_id=connection.scope.get("state", {}).get("request_id"),
        decision=decision,
        status=status,
        method=str(connection.scope.get("method", "")),
        path=connection.scope["path"],
        operation=operation,
        reason=reason,
    )
