"""Console routes: `/` → `/ui`, the page shell, its public config, and every asset served from the package."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import msgspec
from litestar import Response, Router, get
from litestar.datastructures import State
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.response import Redirect
from litestar.static_files import create_static_files_router

from api.auth.rules import anyone, requires
from api.container import services

STATIC_DIR = Path(__file__).parent / "static"
STATIC_PATH = "/ui/static"
SWAGGER_UI_VERSION = "5.35.0"  # the vendored swagger-ui-dist; refresh: api/console/static/vendor/README.md
_SWAGGER = f"{STATIC_PATH}/vendor/swagger-ui"
# The page's data comes from /catalog and /management with the user's own token: nothing here is private,
# and the shell never embeds data, so a cached copy cannot leak one user's view to another.
_NO_STORE = {"Cache-Control": "no-cache"}


class ConsoleConfig(msgspec.Struct, rename="kebab", omit_defaults=True):
    """What the browser needs before it can call the API: whether to log in, and with which provider."""

    auth: str  # "none" or "oidc"
    version: str
    issuer: str | None = None
    client_id: str | None = None
    scope: str | None = None
    resource: str | None = None


@get("/", include_in_schema=False, opt=requires(anyone))
async def console_redirect() -> Redirect:
    return Redirect("/ui")


@get("/ui", include_in_schema=False, opt=requires(anyone))
async def console_index() -> Response[bytes]:
    """The single page; routes below it live in the URL fragment, so reloads and deep links land here."""
    return Response((STATIC_DIR / "index.html").read_bytes(), media_type="text/html", headers=_NO_STORE)


@get("/ui/config.json", include_in_schema=False, opt=requires(anyone))
async def console_config(state: State) -> ConsoleConfig:
    """Public by design: the issuer and a public client id are what any login page shows."""
    settings = services(state).settings
    if not settings.openid_provider_uri:
        return ConsoleConfig(auth="none", version=version("catalog-es"))
    ui = settings.ui
    return ConsoleConfig(
        auth="oidc",
        version=version("catalog-es"),
        issuer=settings.openid_provider_uri.rstrip("/"),
        client_id=ui.client_id,
        scope=ui.scope,
        resource=ui.resource,
    )


def docs_render_plugin() -> SwaggerRenderPlugin:
    """Swagger UI from the vendored files (Litestar's default loads them, and its favicon, from a CDN)."""
    return SwaggerRenderPlugin(
        version=SWAGGER_UI_VERSION,
        js_url=f"{_SWAGGER}/swagger-ui-bundle.js",
        css_url=f"{_SWAGGER}/swagger-ui.css",
        standalone_preset_js_url=f"{_SWAGGER}/swagger-ui-standalone-preset.js",
        favicon=f'<link rel="icon" type="image/png" href="{_SWAGGER}/favicon-32x32.png">',
    )


CONSOLE_ROUTES: list[HTTPRouteHandler | Router] = [
    console_redirect,
    console_index,
    console_config,
    create_static_files_router(
        path=STATIC_PATH, directories=[STATIC_DIR], include_in_schema=False, opt=requires(anyone)
    ),
]
