"""The Iceberg REST catalog API: one `Router` under /catalog/v1, with the Idempotency-Key middleware on it."""

from __future__ import annotations

from datetime import timedelta

from litestar import Router

from api.auth.rules import preflight, server_operator

PATH = "/catalog/v1"


def catalog_router(idempotency_key_lifetime: timedelta) -> Router:
    """Every catalog route; a new one is added to its module's controller and declares its rule there.

    The route modules are imported here, not at the top: `api.errors` (below every route) imports this
    package's wire module, and a package import runs this file first.
    """
    from api.catalog.config import get_config  # noqa: PLC0415
    from api.catalog.credentials import load_credentials  # noqa: PLC0415
    from api.catalog.events import query_events  # noqa: PLC0415
    from api.catalog.namespaces import NamespacesController  # noqa: PLC0415
    from api.catalog.oauth import get_token  # noqa: PLC0415
    from api.catalog.sign import SIGN_ROUTES  # noqa: PLC0415
    from api.catalog.tables import TablesController, commit_transaction, rename_table  # noqa: PLC0415
    from api.catalog.views import ViewsController, rename_view  # noqa: PLC0415
    from api.idempotency import IdempotencyMiddleware  # noqa: PLC0415

    return Router(
        PATH,
        route_handlers=[
            get_config,
            get_token,
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
