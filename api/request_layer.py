"""The one middleware every routed request passes: request id and log context, metrics, endpoint statistics,
authentication and the body check, in that order, with one wrapped `send` (one layer instead of five); then the
routed handler, or a route's bare answer."""

from __future__ import annotations

import os
import time

import structlog
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.auth.middleware import AuthenticationMiddleware
from api.bare_routes import answer_bare, bare_route
from api.body_check import body_refusal, refuse
from api.endpoint_statistics import EndpointStatistics
from api.http_metrics import MESSAGE_BYTES, HttpMetrics, log_rejected
from api.logging import REQUEST_ID_HEADER

_log = structlog.get_logger("catalog_es.http")
_REQUEST_ID = REQUEST_ID_HEADER.encode()


_VARIANT = {f"{n:x}": f"{n & 0x3 | 0x8:x}" for n in range(16)}


def new_request_id() -> str:
    """`str(uuid.uuid4())` (version 4, RFC 4122 variant, from `os.urandom`) at a fraction of its cost."""
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


class RequestLayer(ASGIMiddleware):
    """Takes the caller's `x-request-id` or makes one (bound to the log context, echoed back); counts and times the
    request by route and status, logging `request.rejected` with a 4xx answer's message; counts it for the endpoint
    statistics; authenticates the caller (when `authentication` is given); refuses a malformed JSON body with 400.

    An answer given here (401, 400) goes through the same observed `send` as the handler's: it is counted, logged
    and carries the request id like any other.
    """

    scopes = (ScopeType.HTTP,)

    def __init__(
        self,
        metrics: HttpMetrics,
        statistics: EndpointStatistics,
        authentication: AuthenticationMiddleware | None = None,
    ) -> None:
        self._metrics, self._statistics, self._authentication = metrics, statistics, authentication

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        headers = dict(scope["headers"])
        request_id = headers.get(_REQUEST_ID, b"").decode() or new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        echoed = (_REQUEST_ID, request_id.encode())
        status = 500
        rejected = bytearray()  # a 4xx answer's body, for its message
        started = time.perf_counter()

        async def observed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", []).append(echoed)  # type: ignore[attr-defined]
            elif 400 <= status < 500 and message["type"] == "http.response.body" and len(rejected) <= MESSAGE_BYTES:
                rejected.extend(message.get("body", b""))
            await send(message)

        bound = structlog.contextvars.bind_contextvars(request_id=request_id)
        self._metrics.in_flight.inc()
        try:
            if self._authentication is not None and not await self._authentication.admit(scope, observed_send):
                return
            refusal = await body_refusal(scope, receive)
            if refusal is not None:
                await refuse(observed_send, refusal)
                return
            bare = bare_route(scope)  # answered below the framework's handler machinery (api/bare_routes.py)
            if bare is None or not await answer_bare(bare, scope, receive, observed_send):
                await next_app(scope, receive, observed_send)
        finally:
            self._metrics.in_flight.dec()
            elapsed = time.perf_counter() - started
            method, route = str(scope.get("method", "")), str(scope.get("path_template") or "unmatched")
            self._metrics.observe(method, route, status, elapsed)
            if 400 <= status < 500:
                log_rejected(method, route, str(scope.get("path", "")), status, bytes(rejected))
            self._statistics.record(scope, status, headers)
            _log.info("request", method=method, path=scope.get("path"), status=status, ms=round(elapsed * 1000, 1))
            structlog.contextvars.reset_contextvars(**bound)
