"""Litestar lifespan steps that keep a background task running for as long as the app serves."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from litestar import Litestar

from projections.catalog.warehouse_invalidation import WarehouseInvalidation


def in_background(
    work: Callable[[Litestar], Coroutine[Any, Any, None]],
) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """A lifespan step: `work(app)` runs while the app serves and is cancelled (and awaited) when it stops."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        task = asyncio.create_task(work(app))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return lifespan


def follow_warehouse_events(dsn: str) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """The log invalidates the app services' warehouse cache (an earlier lifespan step opens the services)."""
    return in_background(lambda app: WarehouseInvalidation(dsn, app.state.services.warehouses).run())
