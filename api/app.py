"""The Litestar app factory: routes, dependencies, error policy, and the pool-owning lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Litestar
from litestar.openapi import OpenAPIConfig

from api.catalog.config import get_config
from api.catalog.namespaces import NamespacesController
from api.catalog.tables import TablesController, commit_transaction, rename_table
from api.catalog.views import ViewsController, rename_view
from api.dependencies import DEPENDENCIES
from api.errors import EXCEPTION_HANDLERS
from api.health import health
from api.idempotency import IdempotencyMiddleware
from api.logging import RequestIdMiddleware
from api.management.audit import AuditController
from api.metrics import metrics
from api.settings import Settings
from catalog_es.clock import RandomIds, SystemClock
from catalog_es.database import open_pool
from catalog_es.eventstore import EventStore
from commands.context import CommandContext
from projections.catalog_projector import project_catalog
from projections.catalog_queries import CatalogReadModel
from projections.relay_metrics import RelayMetrics


def create_app(settings: Settings, dsn: str, *, relay_metrics: RelayMetrics | None = None) -> Litestar:
    """The catalog API on a migrated database at `dsn`; `/metrics` shows the in-process relay's figures."""

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        pool = await open_pool(dsn)
        clock, ids, read_model = SystemClock(), RandomIds(), CatalogReadModel()
        store = EventStore(
            pool, clock=clock, ids=ids, source=settings.event_source, inline_projectors=[project_catalog]
        )
        app.state.ctx = CommandContext(store=store, state=read_model, clock=clock, ids=ids)
        app.state.read_model = read_model
        app.state.settings = settings
        app.state.relay_metrics = relay_metrics
        try:
            yield
        finally:
            await pool.close()

    return Litestar(
        route_handlers=[
            health,
            metrics,
            get_config,
            NamespacesController,
            TablesController,
            rename_table,
            commit_transaction,
            ViewsController,
            rename_view,
            AuditController,
        ],
        dependencies=DEPENDENCIES,
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        middleware=[RequestIdMiddleware(), IdempotencyMiddleware(settings.idempotency_key_lifetime)],
        lifespan=[lifespan],
        openapi_config=OpenAPIConfig(title="catalog-es", version="0.1.0", path="/docs"),
        logging_config=None,
        request_max_body_size=settings.max_request_body_bytes,
    )
