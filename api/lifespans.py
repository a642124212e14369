"""Litestar lifespan steps that keep a background task running for as long as the app serves."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from litestar import Litestar

from api.auth.revocations import RevocationFeed
from projections.catalog.warehouse_invalidation import WarehouseInvalidation
from projections.changed_streams import ChangedStreams

FIRST_LOOK_SECONDS = 10.0  # how long the app waits, before serving, for the caches' first load


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


def following_the_log(dsn: str, wait_seconds: float) -> Callable[[Litestar], AbstractAsyncContextManager[None]]:
    """The app services' caches the log keeps (the warehouse cache; the revocation list when service principals
    are enabled) follow it through one `ChangedStreams`: one listening connection per process for all of them.

    An earlier lifespan step opens the services. Serving starts after the first load (the revocation list refuses
    every local token until then), or after `FIRST_LOOK_SECONDS` while the database does not answer. A request
    waits at most `wait_seconds` for the warehouse cache's look at the log.
    """

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        services = app.state.services
        changes = app.state.changed_streams = ChangedStreams(dsn)
        changes.subscribe(WarehouseInvalidation(changes, services.warehouses, wait_seconds=wait_seconds))
        if services.local_tokens is not None:
            changes.subscribe(RevocationFeed(services.local_tokens.revocations))
        async with in_background(lambda _: changes.run())(app):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changes.started.wait(), FIRST_LOOK_SECONDS)
            yield

    return lifespan
