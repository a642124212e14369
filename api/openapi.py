"""OpenAPI documents per API (catalog, management) and the Swagger UI at /swagger-ui."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Redirect

from api.auth.rules import anyone, requires

_APIS = {"catalog": "/catalog/v1", "management": "/management/v1"}


def _document(request: Request[Any, Any, Any], prefix: str) -> dict[str, Any]:
    schema: dict[str, Any] = request.app.openapi_schema.to_schema()
    schema["paths"] = {path: item for path, item in schema.get("paths", {}).items() if path.startswith(prefix)}
    return schema


@get("/api-docs/catalog/v1/openapi.json", include_in_schema=False, opt=requires(anyone))
async def catalog_openapi(request: Request[Any, Any, Any]) -> dict[str, Any]:
    return _document(request, _APIS["catalog"])


@get("/api-docs/management/v1/openapi.json", include_in_schema=False, opt=requires(anyone))
async def management_openapi(request: Request[Any, Any, Any]) -> dict[str, Any]:
    return _document(request, _APIS["management"])


@get("/swagger-ui", include_in_schema=False, opt=requires(anyone))
async def swagger_ui() -> Redirect:
    return Redirect("/docs/swagger")


API_DOCS_ROUTES = [catalog_openapi, management_openapi, swagger_ui]
