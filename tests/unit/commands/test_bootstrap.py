"""Bootstrap commands without PostgreSQL: the one-time bootstrap and the default project and warehouse."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import WAREHOUSE, FakeCatalogState, fake_context

from catalog_es.errors import AlreadyBootstrappedError, BadRequestError
from catalog_es.events import ProjectCreated, ServerBootstrapped, WarehouseCreated
from catalog_es.identifiers import NIL_PROJECT_ID
from catalog_es.state import ProjectRow
from catalog_es.store.eventstore import EventMetadata
from commands.bootstrap import Bootstrap, EnsureDefaultWarehouse, handle_bootstrap, handle_ensure_default_warehouse

META = EventMetadata(actor="admin")
DEFAULT_PROJECT = ProjectRow(id=NIL_PROJECT_ID, name="default")


def _bootstrap(**changes: object) -> Bootstrap:
    return Bootstrap(accept_terms_of_use=True, metadata=META, **changes)  # type: ignore[arg-type]


def test_bootstrap_records_the_server_id_and_the_default_project():
    ctx, store = fake_context(FakeCatalogState(warehouses=[]))
    server_id = asyncio.run(handle_bootstrap(_bootstrap(is_operator=True, user_name="Ann"), ctx))
    assert store.appended == [
        ServerBootstrapped(server_id=server_id, is_operator=True, user_name="Ann"),
        ProjectCreated(project_id=NIL_PROJECT_ID, name="default"),
    ]


def test_bootstrap_leaves_an_existing_default_project_alone():
    ctx, store = fake_context(FakeCatalogState(warehouses=[], projects=[DEFAULT_PROJECT]))
    server_id = asyncio.run(handle_bootstrap(_bootstrap(), ctx))
    assert store.appended == [ServerBootstrapped(server_id=server_id)]


@pytest.mark.parametrize(
    ("catalog", "command", "error"),
    [
        (FakeCatalogState(warehouses=[]), Bootstrap(accept_terms_of_use=False, metadata=META), BadRequestError),
        (FakeCatalogState(warehouses=[], server=uuid.UUID(int=3)), _bootstrap(), AlreadyBootstrappedError),
        # Under allow-all the default project `serve` made stands for the bootstrap.
        (
            FakeCatalogState(warehouses=[], projects=[DEFAULT_PROJECT]),
            _bootstrap(allow_all=True),
            AlreadyBootstrappedError,
        ),
    ],
)
def test_bootstrap_is_refused_without_terms_and_once_spent(catalog, command, error):
    ctx, store = fake_context(catalog)
    with pytest.raises(error):
        asyncio.run(handle_bootstrap(command, ctx))
    assert store.appended == []


def test_ensure_default_warehouse_creates_project_and_file_warehouse_once():
    ctx, store = fake_context(FakeCatalogState(warehouses=[]))
    command = EnsureDefaultWarehouse("demo", "file:///data/warehouse/", META)
    warehouse_id = asyncio.run(handle_ensure_default_warehouse(command, ctx))
    assert store.appended == [
        ProjectCreated(project_id=NIL_PROJECT_ID, name="default"),
        WarehouseCreated(
            warehouse_id=warehouse_id,  # type: ignore[arg-type]
            project_id=NIL_PROJECT_ID,
            name="demo",
            storage_profile={"type": "file", "location": "file:///data/warehouse"},
        ),
    ]


def test_ensure_default_warehouse_is_idempotent_and_creates_no_warehouse_without_a_location():
    existing = FakeCatalogState(projects=[ProjectRow(id=WAREHOUSE.project_id, name="p")])
    ctx, store = fake_context(existing)
    command = EnsureDefaultWarehouse("WH", "file:///elsewhere", META, project_id=WAREHOUSE.project_id)
    assert asyncio.run(handle_ensure_default_warehouse(command, ctx)) == WAREHOUSE.id  # found by name, any case
    assert store.appended == []
    ctx, store = fake_context(FakeCatalogState(warehouses=[]))
    assert asyncio.run(handle_ensure_default_warehouse(EnsureDefaultWarehouse("demo", None, META), ctx)) is None
    assert store.appended == [ProjectCreated(project_id=NIL_PROJECT_ID, name="default")]
