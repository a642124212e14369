"""The access-log hook of routes that decide in their handler (sign, credentials): refusals always, reads on request.

A handler wraps its body in `audited(request, method=..., path=...)`; a refusal (403, or the not-found answer
of something hidden) escaping the block is recorded as denied or hidden, a normal exit as an allowed access
when `audit_reads` is on. The method and path recorded are what was acted on (for a sign request: the S3
method and URL), never a query string or a header, which may carry credentials.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from litestar.connection import ASGIConnection

from api.auth.access_audit import REFUSALS
from api.auth.principal import request_principal
from api.container import services
from catalog_es.errors import ForbiddenError
from catalog_es.store.access_log import AccessRecord, record_access


class AccessNote:
    """What the handler tells the log about an allowed access (why it was allowed); `reason` defaults to authorized."""

    def __init__(self) -> None:
        self.reason = "authorized"


def without_secrets(url: str) -> str:
    """`scheme://host/path` of a URL: no user info, query string or fragment (presigned URLs carry keys there)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else parts.path


@asynccontextmanager
async def audited(
    connection: ASGIConnection[Any, Any, Any, Any], *, method: str | None = None, path: str | None = None
) -> AsyncIterator[AccessNote]:
    """Record the outcome of the block; `method` and `path` default to the request's own (its path has no query)."""
    note = AccessNote()
    try:
        yield note
    except REFUSALS as refusal:
        forbidden = isinstance(refusal, ForbiddenError)
        decision, status = ("denied", 403) if forbidden else ("hidden", 404)
        await _record(connection, decision, status, str(refusal), method, path)
        raise
    if services(connection.app.state).settings.audit_reads:
        await _record(connection, "allowed", 200, note.reason, method, path)


async def _record(
    connection: ASGIConnection[Any, Any, Any, Any],
    decision: str,
    status: int,
    reason: str,
    method: str | None,
    path: str | None,
) -> None:
    handler = connection.scope.get("route_handler")
    record = AccessRecord(
        time=datetime.now(UTC),
        actor=request_principal(connection.scope).user_id,
        request_id=connection.scope.get("state", {}).get("request_id"),
        decision=decision,
        status=status,
        method=(method or str(connection.scope.get("method", ""))).upper(),
        path=path if path is not None else connection.scope["path"],
        operation=getattr(handler, "handler_name", "") or "",
        reason=reason,
    )
    async with services(connection.app.state).ctx.store.connection() as conn:
        await record_access(conn, record)
