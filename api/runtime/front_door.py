"""What `serve` tells a new user once its port accepts connections: the warehouses that exist, how to authenticate,
where the console and the API docs are, and the pyiceberg and Spark snippets that work in this mode."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, cast

import httpx
import structlog

from api.container import open_services
from api.settings import Settings
from catalog_es.identifiers import NIL_PROJECT_ID
from catalog_es.spark.conf import CLOUD_BUNDLE, StorageType, catalog_conf

_log = structlog.get_logger(__name__)
# Listening everywhere: a client on this machine connects to loopback (compared with, never bound).
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104
_STORAGE_TYPES: frozenset[str] = frozenset({"file", "s3", "adls", "gcs"})


@dataclass(frozen=True)
class Warehouse:
    name: str
    storage: StorageType


@dataclass(frozen=True)
class FrontDoor:
    """The facts the banner states, gathered from the settings, the database and the OpenID provider."""

    base_url: str  # http://host:port, as a client on this machine reaches it
    warehouses: tuple[Warehouse, ...]
    provider: str | None = None  # the OpenID provider; None: authentication is off
    token_endpoint: str | None = None
    scope: str | None = None
    authz: str = "allowall"
    console: bool = True


def base_url(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in _WILDCARDS else settings.host
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.port}"


async def existing_warehouses(settings: Settings, dsn: str) -> tuple[Warehouse, ...]:
    """The active warehouses of the default project, the ones `warehouse="<name>"` reaches without a project id."""
    async with open_services(settings, dsn, pool_size=(1, 1)) as services, services.pool.connection() as conn:
        rows = await services.read_model.warehouses_in_project(conn, NIL_PROJECT_ID)
    found = []
    for row in rows:
        kind = str(row.storage_profile.get("type", "file"))
        if row.status == "active":
            found.append(Warehouse(row.name, cast("StorageType", kind if kind in _STORAGE_TYPES else "file")))
    return tuple(found)


def token_endpoint(provider: str) -> str | None:
    """The provider's token endpoint (OpenID discovery), where a client trades its credentials for a token."""
    try:
        response = httpx.get(f"{provider.rstrip('/')}/.well-known/openid-configuration", timeout=3.0)
        response.raise_for_status()
        endpoint = response.json().get("token_endpoint")
    except (httpx.HTTPError, ValueError, AttributeError) as error:
        _log.warning("oidc discovery for the banner failed", provider=provider, error=str(error))
        return None
    return endpoint if isinstance(endpoint, str) else None


def front_door(settings: Settings, warehouses: tuple[Warehouse, ...]) -> FrontDoor:
    provider = settings.openid_provider_uri
    return FrontDoor(
        base_url=base_url(settings),
        warehouses=warehouses,
        provider=provider,
        token_endpoint=token_endpoint(provider) if provider else None,
        scope=settings.openid_scope,
        authz=settings.authz.backend,
        console=settings.ui.enabled,
    )


def wait_until_serving(url: str, *, timeout: float, interval: float = 0.1) -> bool:
    """Poll `url` until the server answers it (True) or `timeout` seconds pass (False).

    An HTTP answer, not a TCP connect: with `--workers N` the supervisor binds the socket long before a worker
    accepts on it, so a connect succeeds (into the backlog) while every request still waits.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1.0)
        except httpx.TransportError:
            time.sleep(interval)
        else:
            return True
    return False


def _auth_lines(door: FrontDoor) -> list[str]:
    if door.provider is None:
        return ["Auth:       off: every caller is anonymous (set CATALOG_ES__OPENID_PROVIDER_URI to turn it on)"]
    endpoint = door.token_endpoint or f"<token_endpoint of {door.provider}/.well-known/openid-configuration>"
    lines = [
        f"Auth:       OpenID Connect ({door.provider}); every request needs a bearer token of this provider.",
        f"            Clients fetch one with their client id and secret from {endpoint}",
    ]
    if door.authz == "builtin":
        lines.append("            Authorizer: builtin; the first admin calls POST /management/v1/bootstrap")
    return lines


def _client_options(door: FrontDoor) -> dict[str, str]:
    """The OAuth2 client-credentials options pyiceberg and Iceberg's Java client share."""
    if door.provider is None:
        return {}
    options = {
        "credential": "<client-id>:<client-secret>",
        "oauth2-server-uri": door.token_endpoint or "<token endpoint>",
    }
    if door.scope:
        options["scope"] = door.scope
    return options


def banner(door: FrontDoor) -> str:
    """The text `serve` prints once the port accepts connections."""
    uri = f"{door.base_url}/catalog"
    names = [warehouse.name for warehouse in door.warehouses]
    first = door.warehouses[0] if door.warehouses else Warehouse("<warehouse>", "s3")
    lines = [
        f"catalog-es is ready: {uri} (health: {door.base_url}/health)",
        "",
        "Warehouses: "
        + (
            ", ".join(f"{w.name} ({w.storage})" for w in door.warehouses)
            if names
            else f"none yet: create one with POST {door.base_url}/management/v1/warehouse (see deploy/README.md)"
        ),
        *_auth_lines(door),
        f"Console:    {door.base_url}/ui" if door.console else "Console:    off (CATALOG_ES__UI__ENABLED=false)",
        f"API docs:   {door.base_url}/docs",
        "",
        "Connect pyiceberg:",
        "    from pyiceberg.catalog import load_catalog",
    ]
    options: dict[str, Any] = {"type": "rest", "uri": uri, "warehouse": first.name, **_client_options(door)}
    plain = ", ".join(f"{key}={json.dumps(value)}" for key, value in options.items() if key.isidentifier())
    dashed = {key: value for key, value in options.items() if not key.isidentifier()}
    extra = f", **{json.dumps(dashed)}" if dashed else ""  # JSON strings are Python literals too
    lines.append(f'    catalog = load_catalog("catalog_es", {plain}{extra})')
    lines += ["", "Connect Spark (conf keys):"]
    conf = catalog_conf(uri, first.name, storage=first.storage)
    conf.update({f"spark.sql.catalog.catalog_es.{key}": value for key, value in _client_options(door).items()})
    if first.storage in CLOUD_BUNDLE:
        conf["spark.jars.packages"] = f"<the Iceberg Spark runtime>,{CLOUD_BUNDLE[first.storage]}"
    lines += [f"    {key}={value}" for key, value in conf.items()]
    return "\n".join(lines) + "\n"
