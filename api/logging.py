"""structlog configuration and the middleware that gives every request an id."""

from __future__ import annotations

import logging
import sys
import time
import uuid

import structlog
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

REQUEST_ID_HEADER = "x-request-id"
_log = structlog.get_logger("catalog_es.http")


def configure_logging(level: str = "info", *, json: bool = True) -> None:
    """JSON lines on stderr (or a console renderer), with request-bound context variables merged in."""
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )


class RequestIdMiddleware(ASGIMiddleware):
    """Take the caller's `x-request-id` or make one; bind it to the log context and echo it back."""

    scopes = ("http",)  # type: ignore[assignment]

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        headers = dict(scope.get("headers", []))
        request_id = headers.get(REQUEST_ID_HEADER.encode(), b"").decode() or str(uuid.uuid4())
        scope.setdefault("state", {})["request_id"] = request_id
        status = 500
        started = time.perf_counter()

        async def send_with_id(message: dict) -> None:  # type: ignore[type-arg]
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).append((REQUEST_ID_HEADER.encode(), request_id.encode()))
            await send(message)  # type: ignore[arg-type]

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            try:
                await next_app(scope, receive, send_with_id)  # type: ignore[arg-type]
            finally:
                _log.info(
                    "request",
                    method=scope.get("method"),
                    path=scope.get("path"),
                    status=status,
                    ms=round((time.perf_counter() - started) * 1000, 1),
                )
