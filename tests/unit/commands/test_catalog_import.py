"""Scheduling a catalog import without PostgreSQL: the sealed properties in `FakeSecretStore`, the task by its event.

The task's run (the import itself, the sealed properties then gone) and the route's refusals are tested against
PostgreSQL in tests/e2e/test_import_task.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from datetime import UTC, datetime

import msgspec
import pytest
from fakes import WAREHOUSE, FakeCatalogState, FakeSecretStore, FakeStore, fake_context

from catalog_es.errors import BadRequestError, NoSuchWarehouseError, WarehouseInactiveError
from catalog_es.events.tasks import TaskScheduled
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.store.eventstore import EventMetadata
from commands.catalog_import import ImportCatalog, handle_import_catalog
from commands.context import CommandContext

META = EventMetadata(actor="tester")
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
SOURCE_HOST = "10.1.2.3"  # a private address: allowed only by the operator's list
PROPERTIES = {"type": "rest", "uri": f"http://{SOURCE_HOST}:8181", "credential": "client:s3cr3t-value"}


class _Frozen:
    def now(self) -> datetime:
        return NOW


def _context(sealed: FakeSecretStore | None, state: FakeCatalogState | None = None) -> tuple[CommandContext, FakeStore]:
    """The fakes' context with `sealed` as its secrets store, a frozen clock and the source's host allowed."""
    ctx, store = fake_context(state, secrets=sealed)
    return dataclasses.replace(ctx, clock=_Frozen(), endpoints=EndpointPolicy(allowed_hosts=(SOURCE_HOST,))), store


def _import(properties: dict[str, str] = PROPERTIES, warehouse_id: uuid.UUID = WAREHOUSE.id) -> ImportCatalog:
    return ImportCatalog(
        warehouse_id=warehouse_id,
        properties=properties,
        source="rest:prod",
        catalog_name="prod",
        namespaces=[["db"], ["sales", "eu"]],
        metadata=META,
    )


def test_import_seals_the_properties_and_queues_a_task_naming_them_by_id_only():
    sealed = FakeSecretStore()
    ctx, store = _context(sealed)
    task_id = asyncio.run(handle_import_catalog(_import(), ctx))
    [(secret_id, document)] = sealed.documents.items()
    assert document == PROPERTIES
    assert store.appended == [
        TaskScheduled(
            task_id=task_id,
            warehouse_id=WAREHOUSE.id,
            queue="catalog_import",
            entity_type="warehouse",
            entity_id=WAREHOUSE.id,
            payload={
                "source": "rest:prod",
                "secret-id": str(secret_id),
                "catalog-name": "prod",
                "namespaces": [["db"], ["sales", "eu"]],
                "actor": "tester",
            },
            due_at_ms=int(NOW.timestamp() * 1000),
            max_attempts=3,
        )
    ]
    assert b"s3cr3t-value" not in msgspec.json.encode(store.appended)


@pytest.mark.parametrize(
    "properties",
    [
        {"type": "rest", "uri": "http://10.9.9.9:8181"},  # a private host the operator did not allow
        {"type": "rest", "uri": "http://169.254.169.254/latest"},  # the cloud metadata service
        {"type": "sql", "uri": "sqlite:///relative/catalog.db"},
        {"type": "sql", "uri": "sqlite:////var/lib/catalog.db"},  # outside the file roots (none here)
        {"type": "rest", "uri": "http://[broken"},
    ],
)
def test_import_refuses_a_source_the_server_may_not_open_and_seals_nothing(properties):
    sealed = FakeSecretStore()
    ctx, store = _context(sealed)
    with pytest.raises(BadRequestError):
        asyncio.run(handle_import_catalog(_import(properties), ctx))
    assert store.appended == []
    assert sealed.documents == {}


def test_import_needs_a_secrets_store_to_seal_the_properties_in():
    ctx, store = _context(None)
    with pytest.raises(BadRequestError, match="secrets key"):
        asyncio.run(handle_import_catalog(_import(), ctx))
    assert store.appended == []


def test_import_refuses_a_missing_or_inactive_warehouse():
    inactive = msgspec.structs.replace(WAREHOUSE, status="inactive")
    sealed = FakeSecretStore()
    ctx, store = _context(sealed, FakeCatalogState(warehouses=[inactive]))
    with pytest.raises(NoSuchWarehouseError):
        asyncio.run(handle_import_catalog(_import(warehouse_id=uuid.UUID(int=404)), ctx))
    with pytest.raises(WarehouseInactiveError):
        asyncio.run(handle_import_catalog(_import(), ctx))
    assert store.appended == []
    assert sealed.documents == {}
