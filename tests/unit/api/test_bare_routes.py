"""Bare answers: taken only for the requests a route accepts, after its guards, failures answered by the app's
exception handlers through the request layer (request id, metrics) like the routed handler's."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Litestar, Request, get
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.params import FromPath
from litestar.testing import TestClient
from litestar.types import Scope

from api.bare_routes import BareResponse, BareRoute, authorize, bare
from api.endpoint_statistics import EndpointStatistics
from api.errors import EXCEPTION_HANDLERS
from api.http_metrics import HttpMetrics
from api.request_layer import RequestLayer
from catalog_es.errors import NoSuchTableError


def _accepts(scope: Scope) -> bool:
    return scope.get("query_string", b"") != b"routed"


async def _answer(request: Request[Any, Any, Any]) -> BareResponse | None:
    if request.path_params["name"] == "declined":
        return None
    await authorize(request)
    if request.path_params["name"] == "missing":
        raise NoSuchTableError("Table does not exist: missing")
    return BareResponse(200, [(b"content-type", b"application/json")], b'{"answered":"bare"}')


async def _refuse_hidden(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    if connection.path_params["name"] == "hidden":
        raise NoSuchTableError("Table does not exist: hidden")


@get("/things/{name:str}", opt=bare(BareRoute(_accepts, _answer)), guards=[_refuse_hidden])
async def thing(name: FromPath[str]) -> dict[str, str]:
    return {"answered": "routed"}


def _app() -> tuple[Litestar, HttpMetrics]:
    metrics = HttpMetrics()
    statistics = EndpointStatistics(clock=lambda: datetime(2026, 1, 1, 10, tzinfo=UTC))
    app = Litestar([thing], middleware=[RequestLayer(metrics, statistics)], exception_handlers=EXCEPTION_HANDLERS)  # type: ignore[arg-type]
    return app, metrics


def test_an_accepted_request_is_answered_bare_with_its_length_and_any_other_or_declined_by_the_handler() -> None:
    app, _ = _app()
    with TestClient(app) as client:
        answered = client.get("/things/a", headers={"x-request-id": "r-1"})
        routed = client.get("/things/a?routed")
        declined = client.get("/things/declined", headers={"x-request-id": "r-3"})

    assert answered.json() == {"answered": "bare"}
    assert answered.headers["content-length"] == str(len(answered.content))
    assert answered.headers["x-request-id"] == "r-1"
    assert routed.json() == {"answered": "routed"}
    assert declined.json() == {"answered": "routed"}  # an answer that declines leaves the request to the handler
    assert declined.headers["x-request-id"] == "r-3"


def test_the_guard_and_a_failure_are_answered_by_the_exception_handlers_through_the_request_layer() -> None:
    app, metrics = _app()
    with TestClient(app) as client:
        hidden = client.get("/things/hidden", headers={"x-request-id": "r-2"})
        missing = client.get("/things/missing")

    for answer in (hidden, missing):
        assert answer.status_code == 404
        assert answer.json()["error"]["type"] == "NoSuchTableException"
    assert hidden.headers["x-request-id"] == "r-2"
    labels = {"method": "GET", "route": "/things/{name}", "status": "404"}
    assert metrics.registry.get_sample_value("catalog_es_http_requests_total", labels) == 2
