"""Every route declares who may call it, beside the route; one without a rule is refused, whoever asks."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

from litestar import Litestar, get
from litestar.datastructures import State
from litestar.params import PathParameter
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from api.app import create_app
from api.auth.authorizer import Authorizer
from api.auth.rules import authorize, in_handler, rule_of
from api.errors import EXCEPTION_HANDLERS
from api.settings import Settings


def _app() -> Litestar:
    settings = Settings()
    assert settings.ui.enabled, "the console's routes are part of the walk"
    return create_app(settings, "postgresql://unused")  # the pool opens only in the lifespan


def test_every_route_of_the_app_declares_its_authorization_rule() -> None:
    app = _app()
    without: list[str] = []
    handlers = 0
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            handlers += 1
            if rule_of(handler) is None:
                without.append(f"{sorted(handler.http_methods)} {route.path} ({handler.handler_name})")
    assert handlers > 60, "the catalog, management, console and docs routes were all walked"
    assert without == []


def test_only_the_s3_signer_leaves_its_decision_to_the_handler() -> None:
    """Every other route decides in its declared rule, on the object it acts on (users, roles, grants included)."""
    deciding = sorted(
        route.path
        for route in _app().routes
        if isinstance(route, HTTPRoute)
        for handler in route.route_handlers
        if rule_of(handler) is in_handler
    )
    assert deciding == [
        "/catalog/v1/aws/s3/sign",
        "/catalog/v1/signer/{prefix:str}/tabular-id/{tabular_id:str}/v1/aws/s3/sign",
        "/catalog/v1/{prefix:str}/namespaces/{namespace:str}/tables/{table:str}/sign",
        "/catalog/v1/{prefix:str}/v1/aws/s3/sign",
    ]


def test_a_route_without_a_rule_is_refused_even_for_the_server_admin() -> None:
    """No rule, no call: the guard answers 403 before it reads anything, whatever the caller may do."""

    @get("/catalog/v1/forgotten")
    async def forgotten() -> str:
        return "reached"

    app = Litestar(
        route_handlers=[forgotten],
        guards=[authorize],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        state=State({"services": SimpleNamespace(authorizer=Authorizer(enabled=True))}),
    )
    with TestClient(app) as client:
        response = client.get("/catalog/v1/forgotten")
    assert response.status_code == 403, response.text
    body: dict[str, Any] = response.json()
    assert body["error"]["type"] == "ForbiddenException"
    assert body["error"]["code"] == 403


def test_building_the_app_emits_no_deprecation_warning() -> None:
    """Litestar 3 drops what 2.x only warns about (inferred dependencies, unmarked bodies and parameters)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _app()
    deprecations = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert deprecations == []


def test_every_path_parameter_a_handler_reads_is_in_its_route_path() -> None:
    """A `FromPath` marker on what is really a query parameter makes the route answer 400 to every request."""
    misplaced: list[str] = []
    for route in _app().routes:
        if not isinstance(route, HTTPRoute):
            continue
        in_path = set(route.path_parameters)
        for handler in route.route_handlers:
            for name, field in handler.parsed_fn_signature.parameters.items():
                if (
                    isinstance(field.kwarg_definition, PathParameter)
                    and (field.kwarg_definition.name or name) not in in_path
                ):
                    misplaced.append(f"{route.path} {handler.handler_name}({name})")
    assert misplaced == []
