"""Undeleting a held warehouse without PostgreSQL.

A held warehouse whose expiration task is still queued has it cancelled after the undelete; cancelling locks
the task's queue row (`store.task_queue.locked_task`, SQL), so that step is tested against PostgreSQL
(tests/integration/test_ended_expiration_tasks.py); here the held rows carry no task.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from fakes import WAREHOUSE, FakeCatalogState, FakeSoftDeleteState, fake_context

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchWarehouseError
from catalog_es.events.lifecycle import WarehouseUndeleted
from catalog_es.soft_delete import DeletedWarehouseRow
from catalog_es.state import WarehouseRow
from catalog_es.store.eventstore import EventMetadata
from commands.warehouse_hold import UndeleteWarehouse, handle_undelete_warehouse

META = EventMetadata(actor="tester")
NOW = datetime.now(UTC)
HELD = DeletedWarehouseRow(
    id=uuid.UUID(int=2),
    project_id=WAREHOUSE.project_id,
    name="held",
    location="file:///held",
    credential_id=None,
    version=4,
    deleted_at=NOW,
    expires_at=NOW + timedelta(hours=1),
    actor="tester",
    expiration_task_id=None,
)


def _context(*others: tuple[str, str]):
    catalog = FakeCatalogState(warehouses=[WAREHOUSE])
    for number, (name, location) in enumerate(others, start=50):
        catalog.warehouses.append(WarehouseRow(uuid.UUID(int=number), WAREHOUSE.project_id, name, location, {}))
    return fake_context(catalog, soft_deletes=FakeSoftDeleteState(catalog, warehouses=[HELD]))


def test_undelete_brings_the_warehouse_back_under_its_name_or_a_new_one():
    ctx, store = _context()
    assert asyncio.run(handle_undelete_warehouse(UndeleteWarehouse(HELD.id, META), ctx)) == "held"
    assert store.appended == [WarehouseUndeleted(warehouse_id=HELD.id, project_id=HELD.project_id, name="held")]
    ctx, store = _context(("held", "file:///elsewhere"))
    assert (
        asyncio.run(handle_undelete_warehouse(UndeleteWarehouse(HELD.id, META, name="held-again"), ctx)) == "held-again"
    )
    assert store.appended == [WarehouseUndeleted(warehouse_id=HELD.id, project_id=HELD.project_id, name="held-again")]


@pytest.mark.parametrize(
    ("others", "command", "error"),
    [
        ((), UndeleteWarehouse(uuid.UUID(int=404), META), NoSuchWarehouseError),
        ((("HELD", "file:///elsewhere"),), UndeleteWarehouse(HELD.id, META), AlreadyExistsError),  # any case
        ((("new", "file:///held/inner"),), UndeleteWarehouse(HELD.id, META), BadRequestError),  # its location
        ((), UndeleteWarehouse(HELD.id, META, name="a/b"), BadRequestError),
    ],
)
def test_undelete_refuses_and_appends_nothing(others, command, error):
    ctx, store = _context(*others)
    with pytest.raises(error):
        asyncio.run(handle_undelete_warehouse(command, ctx))
    assert store.appended == []
