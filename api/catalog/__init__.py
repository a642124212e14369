"""The Iceberg REST catalog API: one `Router` under /catalog/v1, with the Idempotency-Key middleware on it."""

from __future__ import annotations

from datetime import timedelta

from litestar import Router

from api.auth.rules import preflight, server_operator
from api.catalog.config import get_config
from api.catalog.credentials import load_credentials
from api.catalog.events import query_events
from api.catalog.namespaces import NamespacesController
from api.catalog.path import PATH
from api.catalog.sign import SIGN_ROUTES
from api.catalog.tables import TablesController, commit_transaction, rename_table
from api.catalog.views import ViewsController, rename_view
from api.idempotency import IdempotencyMiddleware


def catalog_router(idempotency_key_lifetime: timedelta) -> Router:
    """Every catalog route; a new one is added to its module's controller and declares its rule there."""
    return Router(
        PATH,
        route_handlers=[
            get_config,
            NamespacesController,
            TablesController,
            load_credentials,
            rename_table,
            commit_transaction,
            ViewsController,
            rename_view,
            query_events,
            *SIGN_ROUTES,
        ],
        middleware=[IdempotencyMiddleware(idempotency_key_lifetime)],
        opt=preflight(server_operator),
    )
