"""The composition root: the one place that builds the write side and its companions for app, CLI, runtime and tests."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from api.auth.authorizer import Authorizer
from api.auth.local_tokens import LocalTokens
from api.auth.provisioning import UserProvisioner
from api.imports.task import catalog_import_handler
from api.maintenance.job import JobRunner, maintenance_handler
from api.maintenance.scheduling import schedule_due
from api.settings import Settings
from catalog_es.clock import RandomIds, SystemClock
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.planning.plan_ids import PlanIds
from catalog_es.planning.service import ScanPlanning
from catalog_es.storage.file_roots import FileStorageRoots
from catalog_es.storage.vendor import CredentialVendor
from catalog_es.store.database import Pool, open_pool
from catalog_es.store.eventstore import EventStore, InlineProjector
from catalog_es.store.secrets import Sealer, SecretStore, load_secrets_key
from commands.builtin_tasks import builtin_task_handlers
from commands.context import CommandContext
from commands.task_handlers import CATALOG_IMPORT, MAINTENANCE, QueueRegistry
from projections.catalog.as_of import AsOfCache
from projections.catalog.queries import CatalogReadModel
from projections.catalog.table_document_batch import TableDocumentBatch
from projections.catalog.warehouse_cache import WarehouseCache
from projections.permissions.queries import AccessReadModel
from projections.protection import ProtectionReadModel
from projections.registry import inline_projectors as default_inline_projectors
from projections.relay.metrics import RelayMetrics

PLAN_ID_PURPOSE = "scan plan ids"  # the secrets-store purpose of the plan-id signing key


@dataclass(frozen=True)
class Services:
    """Everything a request, a command or a process needs, built once per process (or per test)."""

    settings: Settings
    pool: Pool
    store: EventStore
    ctx: CommandContext
    read_model: CatalogReadModel
    warehouses: WarehouseCache
    secrets: SecretStore | None
    authorizer: Authorizer
    provisioner: UserProvisioner
    idempotency_sealer: Sealer | None  # stored idempotent responses, sealed with the secrets key when there is one
    relay_metrics: RelayMetrics | None = None
    as_of: AsOfCache = field(default_factory=lambda: AsOfCache(4))  # replayed past catalogs (as-of prefixes)
    vendor: CredentialVendor = field(default_factory=CredentialVendor)  # vended S3 credentials and their cache
    # plans, their cache and ids
    planning: ScanPlanning = field(default_factory=lambda: scan_planning(Settings(), None))
    local_tokens: LocalTokens | None = None  # the service principals' token signer (None: not enabled)
    # loadTable's table statements of concurrent requests read as one (None: each its own, on the read model)
    table_documents: TableDocumentBatch | None = None


def scan_planning(settings: Settings, secrets: SecretStore | None) -> ScanPlanning:
    """The process's scan planner with its bounded plan cache (`CATALOG_ES__SCAN_PLANNING__*`).

    Plan-ids are signed with a key derived from the secrets key, so every replica reads the others' ids; without
    a secrets store (file warehouses only) the key is this process's own and an id is served by its replica only.
    """
    config = settings.scan_planning
    key = secrets.signing_key(PLAN_ID_PURPOSE) if secrets is not None else os.urandom(32)
    return ScanPlanning(
        cache_bytes=config.cache_mib * 1024 * 1024,
        max_plans=config.max_plans,
        page_size=config.page_size,
        sync_seconds=config.sync_seconds,
        ids=PlanIds(key),
        max_queued=config.max_queued,
    )


def secret_store(settings: Settings) -> SecretStore | None:
    """The configured key; in embedded mode a key file in the data dir; otherwise no store (file warehouses only)."""
    if settings.secrets_key is None and settings.pg_dsn is not None:
        return None
    return SecretStore(load_secrets_key(settings.secrets_key, settings.data_path))


@asynccontextmanager
async def open_services(
    settings: Settings,
    dsn: str,
    *,
    authorizer: Authorizer | None = None,
    provisioner: UserProvisioner | None = None,
    relay_metrics: RelayMetrics | None = None,
    pool_size: tuple[int, int] = (2, 16),
    read_model: CatalogReadModel | None = None,
    inline_projectors: Sequence[InlineProjector] | None = None,
    file_roots: FileStorageRoots | None = None,
    local_tokens: LocalTokens | None = None,
) -> AsyncIterator[Services]:
    """Open the pool and wire store, command context, caches and secrets on it; the pool closes on exit.

    One `MetadataDocuments` serves the commit commands and the catalog projector (unless `inline_projectors` are
    given): a hot table's commit reads, decodes and parses no metadata document. The secrets store is always the
    settings' one, so a CLI command writes with the same credentials
    (and the same warehouse S3 settings) as the server; it was once forgotten in `audit export`.
    """
    min_size, max_size = pool_size
    pool = await open_pool(dsn, min_size=min_size, max_size=max_size, checkout_timeout=settings.pg_pool_timeout_seconds)
    try:
        clock, ids, warehouses = (
            SystemClock(),
            RandomIds(),
            WarehouseCache(ttl=None),
        )  # the log invalidates it (api/lifespans.py: following_the_log)
        state = read_model or CatalogReadModel()
        documents = MetadataDocuments()
        if inline_projectors is None:
            inline_projectors = default_inline_projectors(documents)
        store = EventStore(
            pool,
            clock=clock,
            ids=ids,
            source=settings.event_source,
            inline_projectors=(*inline_projectors, warehouses.forget),
        )
        secrets = secret_store(settings)
        ctx = CommandContext(
            store=store,
            state=state,
            clock=clock,
            ids=ids,
            access=AccessReadModel(),
            protections=ProtectionReadModel(),
            secrets=secrets,
            warehouses=warehouses,
            endpoints=settings.endpoint_policy,
            file_roots=file_roots if file_roots is not None else settings.file_roots,
            server_side_rebase=settings.server_side_rebase,
            documents=documents,
            soft_deletes=state,
            warehouse_hold_seconds=settings.warehouse_delete_hold_seconds,
        )
        yield Services(
            settings=settings,
            pool=pool,
            store=store,
            ctx=ctx,
            read_model=state,
            warehouses=warehouses,
            secrets=secrets,
            authorizer=authorizer or Authorizer(enabled=False),
            provisioner=provisioner or UserProvisioner(),
            idempotency_sealer=secrets.sealer("idempotent responses") if secrets is not None else None,
            relay_metrics=relay_metrics,
            as_of=AsOfCache(settings.as_of_cache_size),
            vendor=CredentialVendor(),
            planning=scan_planning(settings, secrets),
            local_tokens=local_tokens,
            table_documents=TableDocumentBatch(pool) if read_model is None else None,  # the read model's own SQL
        )
    finally:
        await pool.close()


def task_queues(settings: Settings, *, maintenance: JobRunner | None = None) -> QueueRegistry:
    """The static queue registry: the catalog's own queues (purge, expiry, metadata cleanup, imports) and, given a Spark
    runner, `maintenance` with the trigger evaluation as its scheduler step. A process serves a part of it
    (`.only(...)`): `catalog-es worker` and `serve` the catalog's queues, `maintenance run` the Spark one."""
    config = settings.task_worker
    handlers = builtin_task_handlers(
        purge_concurrency=config.purge_concurrency, purge_batch_size=config.purge_batch_size
    )
    handlers[CATALOG_IMPORT] = catalog_import_handler()
    if maintenance is None:
        return QueueRegistry(handlers)
    handlers[MAINTENANCE] = maintenance_handler(maintenance, settings.maintenance.lease_seconds)
    return QueueRegistry(handlers, scheduler_steps=(schedule_due,))


def services(state: Any) -> Services:
    """The app's `Services` from its `State` (the one place that knows the attribute's name)."""
    found: Services = state.services
    return found
