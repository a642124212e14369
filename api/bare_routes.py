"""Bare answers: a route may answer the requests it accepts below the framework's handler machinery.

A route declares `opt=bare(BareRoute(accepts, answer))` beside its handler. For a request `accepts` takes (a
cheap look at the scope: nothing is read, nothing decided), the request layer calls `answer` in place of the
routed handler: the same authentication, request id, metrics and body check ran before it, the answer runs the
route's guards itself (`authorize`, the same rule), and a failure is answered by the app's exception handlers.
An answer may still decline (None) before it has done anything, e.g. for a body the handler's `data` would refuse:
the routed handler then answers. Any other request goes to the routed handler as before (its parameter validation,
its errors). A route's `accepts` takes only requests the layers between the request layer and the handler let
through untouched: the catalog's idempotency middleware passes reads and mutations without an Idempotency-Key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from litestar import Request
from litestar.handlers import BaseRouteHandler
from litestar.types import Receive, Scope, Send

BARE = "bare"
"""The key of a route's `opt` that holds its `BareRoute`."""


class BareResponse(NamedTuple):
    """A whole answer: its status, headers (lower-case names, no content-length: added here) and body."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes = b""


Answer = Callable[[Request[Any, Any, Any]], Awaitable[BareResponse | None]]


class BareRoute(NamedTuple):
    """`accepts(scope)`: whether `answer` answers this request exactly as the routed handler would."""

    accepts: Callable[[Scope], bool]
    answer: Answer


def bare(route: BareRoute) -> dict[str, BareRoute]:
    """A route's `opt` entry: `@get(..., opt={**requires(rule), **bare(route)})`."""
    return {BARE: route}


def bare_route(scope: Scope) -> BareRoute | None:
    """The bare route that takes this request, if any."""
    handler: BaseRouteHandler | None = scope.get("route_handler")
    route: BareRoute | None = None if handler is None else handler.opt.get(BARE)
    return route if route is not None and route.accepts(scope) else None


async def authorize(request: Request[Any, Any, Any]) -> None:
    """The route's guards, as the framework runs them before a handler (raises their refusal)."""
    handler: BaseRouteHandler = request.scope["route_handler"]
    await handler.authorize_connection(request)


async def answer_bare(route: BareRoute, scope: Scope, receive: Receive, send: Send) -> bool:
    """Run `route.answer` and send what it answers; a failure goes to the exception handler of its type among the
    route's (the app's error policy), before anything was sent. False: the answer declined, nothing was sent."""
    request: Request[Any, Any, Any] = Request(scope, receive, send)
    try:
        response = await route.answer(request)
    except Exception as exc:
        await _answer_failure(request, exc)
        return True
    if response is None:
        return False
    headers = response.headers
    if response.status not in (204, 304):
        headers = [*headers, (b"content-length", str(len(response.body)).encode())]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body, "more_body": False})
    return True


async def _answer_failure(request: Request[Any, Any, Any], exc: Exception) -> None:
    handler: BaseRouteHandler = request.scope["route_handler"]
    handlers = handler.resolve_exception_handlers()
    for cls in type(exc).__mro__:
        answer = handlers.get(cls)
        if answer is not None:
            break
    else:
        raise exc
    response = answer(request, exc)
    asgi = response.to_asgi_response(app=None, request=request, type_encoders=handler.resolve_type_encoders())
    await asgi(request.scope, request.receive, request.send)
