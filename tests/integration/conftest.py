"""Integration fixtures: a migrated database and a factory for the whole write side on it (the app's own wiring).

Async pools are bound to one event loop, so fixtures hand out factories that a test opens inside
its own `asyncio.run(...)`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from api.container import open_services
from api.runtime.database import migrate
from api.settings import load_settings
from catalog_es.storage.file_roots import FileStorageRoots
from catalog_es.store.database import Pool
from catalog_es.store.eventstore import EventMetadata, EventStore, InlineProjector
from commands.bootstrap import EnsureDefaultWarehouse, handle_ensure_default_warehouse
from commands.context import CommandContext
from projections.catalog.queries import CatalogReadModel
from projections.registry import INLINE_PROJECTORS
from tests.integration.nats_server import NatsServer
from tests.integration.s3_server import s3_endpoint  # noqa: F401 - the moto S3 fixture
from tests.integration.store_emulators import azurite, gcs_emulator  # noqa: F401 - Azurite and the GCS emulator

META = EventMetadata(actor="tester", request_id="req-integration")


@dataclass
class Catalog:
    """The write side over one database: pool, event store, command context and a bootstrapped warehouse."""

    pool: Pool
    store: EventStore
    ctx: CommandContext
    warehouse_id: uuid.UUID
    warehouse_dir: Path


OpenCatalog = Callable[..., AbstractAsyncContextManager[Catalog]]


@pytest.fixture
def migrated_dsn(pg_dsn: str) -> str:
    asyncio.run(migrate(pg_dsn))
    return pg_dsn


@pytest.fixture
def warehouse_dir(tmp_path: Path) -> Path:
    return tmp_path / "warehouse"


@pytest.fixture
def open_catalog(migrated_dsn: str, warehouse_dir: Path) -> OpenCatalog:
    """`async with open_catalog() as catalog:` inside a test's event loop (bootstrap=False: an empty log)."""

    @asynccontextmanager
    async def _open(
        *,
        state: CatalogReadModel | None = None,
        bootstrap: bool = True,
        max_size: int = 16,
        projectors: Sequence[InlineProjector] = INLINE_PROJECTORS,
    ) -> AsyncIterator[Catalog]:
        # File warehouses anywhere in the test's temporary directory (the default allows none); no secrets key.
        roots = FileStorageRoots.of([str(warehouse_dir.parent)], None)
        settings = load_settings({}, pg_dsn=migrated_dsn, data_dir=str(warehouse_dir.parent))
        async with open_services(
            settings,
            migrated_dsn,
            pool_size=(1, max_size),
            read_model=state,
            inline_projectors=projectors,
            file_roots=roots,
        ) as services:
            ctx = services.ctx
            warehouse_id = uuid.UUID(int=0)
            if bootstrap:
                warehouse_id = (
                    await handle_ensure_default_warehouse(
                        EnsureDefaultWarehouse(warehouse_name="demo", location=str(warehouse_dir), metadata=META), ctx
                    )
                    or warehouse_id
                )
            yield Catalog(
                pool=services.pool,
                store=services.store,
                ctx=ctx,
                warehouse_id=warehouse_id,
                warehouse_dir=warehouse_dir,
            )

    return _open


@pytest.fixture
def nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A nats-server with JetStream from the wheel on a free loopback port; tests may stop and restart it."""
    server = NatsServer(tmp_path / "nats-server")
    server.start()
    yield server
    server.stop()
