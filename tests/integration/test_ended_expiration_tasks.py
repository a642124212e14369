"""Undrop and undelete once their expiration task has ended: the committed change stands (no 409 after it).

An operator may cancel an expiration task, or it may fail for good; cancelling it again then raises
`TaskFinishedError`. The undrop or undelete, already committed, must still answer success.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

from catalog_es.identifiers import Namespace
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import DropTable, handle_drop_table
from commands.tasks import cancel_task
from commands.undrop import UndropTabulars, UndropTarget, handle_undrop_tabulars
from commands.warehouse_hold import UndeleteWarehouse, handle_undelete_warehouse
from commands.warehouses import (
    DeleteWarehouse,
    UpdateDeleteProfile,
    handle_delete_warehouse,
    handle_update_delete_profile,
)
from tests.integration.conftest import META
from tests.integration.test_rebuild import SCHEMA

NS = Namespace(("sales",))


async def _fetch(catalog, query: str, *params):
    async with catalog.pool.connection() as conn:
        cursor = await conn.execute(query, params)
        return await cursor.fetchall()


def test_undrop_succeeds_when_its_expiration_task_has_already_ended(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ctx, warehouse = catalog.ctx, catalog.warehouse_id
            profile = {"type": "soft", "expiration-seconds": 3600}
            await handle_update_delete_profile(UpdateDeleteProfile(warehouse, profile, META), ctx)
            await handle_create_namespace(CreateNamespace(warehouse, NS, {}, META), ctx)
            created = await handle_create_table(CreateTable(warehouse, NS, "t", SCHEMA, META), ctx)
            table_id = uuid.UUID(created.metadata["table-uuid"])
            await handle_drop_table(DropTable(warehouse, NS, "t", False, META), ctx)
            [[task_id]] = await _fetch(
                catalog, "SELECT expiration_task_id FROM deleted_tabulars WHERE id = %s", table_id
            )
            await cancel_task(ctx, task_id, META)
            restored = await handle_undrop_tabulars(
                UndropTabulars(warehouse, [UndropTarget("table", table_id)], META), ctx
            )
            return restored, await _fetch(catalog, "SELECT name FROM tables")

    restored, live = asyncio.run(scenario())
    assert [(item.kind, item.name) for item in restored] == [("table", "t")]
    assert live == [("t",)]


def test_undelete_succeeds_when_the_held_warehouses_expiration_task_has_already_ended(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ctx = dataclasses.replace(catalog.ctx, warehouse_hold_seconds=3600)
            warehouse = catalog.warehouse_id
            await handle_delete_warehouse(DeleteWarehouse(warehouse, META, force=True), ctx)
            [[task_id]] = await _fetch(catalog, "SELECT expiration_task_id FROM deleted_warehouses")
            await cancel_task(ctx, task_id, META)
            name = await handle_undelete_warehouse(UndeleteWarehouse(warehouse, META), ctx)
            return name, await _fetch(catalog, "SELECT name FROM warehouses")

    name, live = asyncio.run(scenario())
    assert name == "demo"
    assert live == [("demo",)]
