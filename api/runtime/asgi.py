"""How `serve` runs the ASGI app: uvloop + httptools, one process or `workers` uvicorn worker processes."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvicorn
from litestar.types import ASGIApp

from api.app import create_app
from api.encoded_slash import keep_encoded_slashes
from api.logging import configure_logging
from api.runtime.coalescing import CoalescingHttpToolsProtocol
from api.settings import ENV_PREFIX, Settings, load_settings

_T = TypeVar("_T")
_WORKER_DSN = "CATALOG_ES_WORKER_DSN"  # the database every worker uses, set by the parent

try:
    import uvloop
except ImportError:  # pragma: no cover - Windows
    uvloop = None  # type: ignore[assignment]


def run_fast(main: Coroutine[Any, Any, _T]) -> _T:
    """`asyncio.run` on uvloop when it is installed (about a third less loop overhead per request)."""
    if uvloop is None:  # pragma: no cover
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def _options(settings: Settings) -> dict[str, Any]:
    """uvicorn options shared by both modes: httptools, uvloop, no access log, our logging."""
    return {
        "host": settings.host,
        "port": settings.port,
        "http": CoalescingHttpToolsProtocol,  # httptools, a response's headers and body in one send
        "loop": "uvloop" if uvloop is not None else "asyncio",
        "log_config": None,
        "access_log": False,
        "timeout_graceful_shutdown": settings.graceful_shutdown_seconds,  # SIGTERM drains, but not forever
    }


def server_config(app: ASGIApp, settings: Settings) -> uvicorn.Config:
    return uvicorn.Config(app, **_options(settings))


def worker_app() -> ASGIApp:
    """The app of one worker process (uvicorn factory): settings from the environment the parent prepared."""
    settings = load_settings()
    configure_logging(settings.log_level, json=settings.log_json)
    return keep_encoded_slashes(create_app(settings, os.environ[_WORKER_DSN]))


def serve_workers(settings: Settings, dsn: str) -> None:
    """Serve with `settings.workers` processes; the relay and projectors then run as their own commands.

    Settings given on the command line reach the workers through the environment.
    """
    os.environ[_WORKER_DSN] = dsn
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("HOST", settings.host),
        ("PORT", str(settings.port)),
        ("AUTHZ__BACKEND", settings.authz.backend),  # `serve --secure`
        ("SERVICE_PRINCIPALS__ENABLED", str(settings.service_principals.enabled).lower()),
    ):
        os.environ[f"{ENV_PREFIX}{name}"] = value
    uvicorn.run("api.runtime.asgi:worker_app", factory=True, workers=settings.workers, **_options(settings))
