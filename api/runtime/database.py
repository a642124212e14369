"""Start-up steps shared by the CLI commands: find the database, migrate it, bootstrap the defaults."""

from __future__ import annotations

import uuid

from api.container import open_services
from api.runtime.embedded_postgres import embedded_dsn
from api.settings import Settings
from catalog_es.errors import BadRequestError
from catalog_es.store.access_log import ACCESS_LOG_MIGRATIONS
from catalog_es.store.database import open_pool
from catalog_es.store.endpoint_statistics import ENDPOINT_STATISTICS_MIGRATIONS
from catalog_es.store.eventstore import EventMetadata
from catalog_es.store.idempotency import IDEMPOTENCY_MIGRATIONS
from catalog_es.store.metrics_reports import METRICS_MIGRATIONS
from catalog_es.store.migrations import EVENT_STORE_MIGRATIONS, apply_migrations
from catalog_es.store.principal_secrets import PRINCIPAL_SECRET_MIGRATIONS
from catalog_es.store.schema_guard import check_not_newer
from catalog_es.store.secrets import SECRETS_MIGRATIONS
from catalog_es.store.task_queue import TASK_LEASE_MIGRATIONS
from commands.bootstrap import EnsureDefaultWarehouse, handle_ensure_default_warehouse
from projections.audit.history import EVENT_HISTORY_MIGRATIONS
from projections.audit.iceberg_events import ICEBERG_EVENTS_MIGRATIONS
from projections.checkpoints import CHECKPOINT_MIGRATIONS, RELAY_MIGRATIONS
from projections.registry import (
    CATALOG,
    LOG_CHAIN,
    MAINTENANCE_HEALTH,
    MAINTENANCE_POLICIES,
    PERMISSIONS,
    PROTECTION,
    SEARCH,
    STATISTICS,
    TASKS,
)

# The one list of schema steps, in the order they are applied: databases in the field applied them in this order,
# so none moves; a new step goes at the end of its owner's list (tests/unit/api/runtime/test_migration_order.py). Each
# projection declares its own steps (its tables in a scratch schema are built from them) and is placed here once.
ALL_MIGRATIONS = (
    *EVENT_STORE_MIGRATIONS,
    *IDEMPOTENCY_MIGRATIONS,
    *SECRETS_MIGRATIONS,
    *CATALOG.migrations,
    *METRICS_MIGRATIONS,
    *RELAY_MIGRATIONS,
    *EVENT_HISTORY_MIGRATIONS,
    *ICEBERG_EVENTS_MIGRATIONS,
    *ACCESS_LOG_MIGRATIONS,
    *CHECKPOINT_MIGRATIONS,
    *STATISTICS.migrations,
    *SEARCH.migrations,
    *PERMISSIONS.migrations,
    *LOG_CHAIN.migrations,
    *MAINTENANCE_POLICIES.migrations,
    *MAINTENANCE_HEALTH.migrations,
    *PROTECTION.migrations,
    *TASKS.migrations,
    *TASK_LEASE_MIGRATIONS,
    *ENDPOINT_STATISTICS_MIGRATIONS,
    *PRINCIPAL_SECRET_MIGRATIONS,
)


def database_dsn(settings: Settings) -> str:
    """The external database when `pg_dsn` is set, else the embedded one in the data dir."""
    return settings.pg_dsn or embedded_dsn(settings.data_path)


async def migrate(dsn: str, *, allow_newer_schema: bool = False) -> list[str]:
    """Apply what is missing; refuse (NewerSchemaError) a database a newer version migrated unless allowed."""
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            if not allow_newer_schema:
                await check_not_newer(conn, ALL_MIGRATIONS)
            return await apply_migrations(conn, ALL_MIGRATIONS)
    finally:
        await pool.close()


async def bootstrap(dsn: str, settings: Settings) -> uuid.UUID | None:
    """Ensure the default project and the local-filesystem default warehouse; return its id.

    The warehouse only where the file storage roots allow it (always in embedded mode, whose default root
    holds it); with an external database and no root, the project alone.
    """
    async with open_services(settings, dsn, pool_size=(1, 1)) as services:
        location: str | None = settings.default_warehouse_location
        try:
            settings.file_roots.check(settings.default_warehouse_location)
        except BadRequestError:
            location = None
        command = EnsureDefaultWarehouse(
            warehouse_name=settings.default_warehouse,
            location=location,
            metadata=EventMetadata(actor="system"),
        )
        return await handle_ensure_default_warehouse(command, services.ctx)
