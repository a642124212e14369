"""Soft deletion on the write side: expiration by the task a worker runs, undrop cancelling it, grants kept,
and the read models rebuilt from the log alike (verify) and as of a position."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

from catalog_es.identifiers import Namespace
from commands.create_table import CreateTable, handle_create_table
from commands.create_view import CreateView, handle_create_view
from commands.expiration import expire_soft_dropped
from commands.namespaces import CreateNamespace, DropNamespace, handle_create_namespace, handle_drop_namespace
from commands.permissions import ChangeAssignments, handle_change_assignments
from commands.tabular_lifecycle import DropTable, handle_drop_table
from commands.tasks import claim_task
from commands.undrop import UndropTabulars, UndropTarget, handle_undrop_tabulars
from commands.warehouses import (
    DeleteWarehouse,
    UpdateDeleteProfile,
    handle_delete_warehouse,
    handle_update_delete_profile,
)
from projections.catalog.as_of import replay
from projections.registry import CATALOG, PERMISSIONS
from projections.verify import verify_projection
from tests.integration.conftest import META
from tests.integration.test_rebuild import SCHEMA

NS = Namespace(("sales",))
VIEW_VERSION = {
    "version-id": 1,
    "schema-id": 0,
    "timestamp-ms": 1_700_000_000_000,
    "summary": {"engine-name": "test"},
    "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}],
    "default-namespace": ["sales"],
}


async def _soft(catalog, seconds: int) -> None:
    profile = {"type": "soft", "expiration-seconds": seconds}
    await handle_update_delete_profile(UpdateDeleteProfile(catalog.warehouse_id, profile, META), catalog.ctx)


async def _fetch(catalog, query: str, *params):
    async with catalog.pool.connection() as conn:
        cursor = await conn.execute(query, params)
        return await cursor.fetchall()


def test_expiration_task_expires_the_table_and_schedules_its_purge_when_the_hold_ran_out(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ctx, warehouse = catalog.ctx, catalog.warehouse_id
            await _soft(catalog, 1)
            await handle_create_namespace(CreateNamespace(warehouse, NS, {}, META), ctx)
            created = await handle_create_table(CreateTable(warehouse, NS, "t", SCHEMA, META), ctx)
            table_id = uuid.UUID(created.metadata["table-uuid"])
            await handle_drop_table(DropTable(warehouse, NS, "t", True, META), ctx)
            early = await claim_task(ctx, ["tabular_expiration"], "test-worker", 30)
            await asyncio.sleep(1.1)
            task = await claim_task(ctx, ["tabular_expiration"], "test-worker", 30)
            result = await expire_soft_dropped(task, ctx)
            again = await expire_soft_dropped(task, ctx)  # at-least-once: a second run finds nothing
            expired = await _fetch(
                catalog, "SELECT data FROM catalog_events WHERE type = 'io.catalog-es.table.expired.v1'"
            )
            purges = await _fetch(
                catalog,
                "SELECT data FROM catalog_events WHERE type = 'io.catalog-es.task.scheduled.v1'"
                " AND data->>'queue' = 'tabular_purge'",
            )
            hidden = await _fetch(catalog, "SELECT id FROM deleted_tabulars")
            authz = await _fetch(catalog, "SELECT id FROM authz_objects WHERE id = %s", table_id)
            async with catalog.pool.connection() as conn:
                verified = [await verify_projection(conn, projection) for projection in (CATALOG, PERMISSIONS)]
            return early, task, result, again, expired, purges, hidden, authz, table_id, created, verified

    early, task, result, again, expired, purges, hidden, authz, table_id, created, verified = asyncio.run(scenario())
    assert all(verification.identical for verification in verified), [v.diffs for v in verified]
    assert early is None  # not due before its expiration
    assert (task.entity_type, task.entity_id) == ("table", table_id)
    assert result["expired"] == [str(table_id)]
    assert again["expired"] == []
    assert [row[0]["table_id"] for row in expired] == [str(table_id)]
    assert expired[0][0]["purge_requested"] is True
    [[purge]] = purges
    assert purge["entity_id"] == str(table_id)
    assert purge["payload"]["metadata-location"] == created.metadata_location
    assert hidden == []
    assert authz == []


def test_undrop_cancels_the_expiration_and_keeps_the_grants_of_a_whole_namespace_tree(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ctx, warehouse = catalog.ctx, catalog.warehouse_id
            await _soft(catalog, 1)
            child = Namespace(("sales", "eu"))
            await handle_create_namespace(CreateNamespace(warehouse, NS, {}, META), ctx)
            await handle_create_namespace(CreateNamespace(warehouse, child, {}, META), ctx)
            created = await handle_create_table(CreateTable(warehouse, child, "orders", SCHEMA, META), ctx)
            await handle_create_view(CreateView(warehouse, NS, "v", SCHEMA, VIEW_VERSION, META), ctx)
            table_id = uuid.UUID(created.metadata["table-uuid"])
            grant = ChangeAssignments("table", table_id, [("user:alice", "select")], [], META)
            await handle_change_assignments(grant, ctx)
            before = await catalog.store.head()
            await handle_drop_namespace(DropNamespace(warehouse, NS, META, recursive=True), ctx)
            dropped_at = await catalog.store.head()
            [[root]] = await _fetch(catalog, "SELECT id FROM deleted_namespaces WHERE with_namespace IS NULL")
            restored = await handle_undrop_tabulars(
                UndropTabulars(warehouse, [UndropTarget("namespace", root)], META), ctx
            )
            await asyncio.sleep(1.1)
            task = await claim_task(ctx, ["tabular_expiration"], "test-worker", 30)
            grants = await _fetch(
                catalog, "SELECT principal, privilege FROM authz_grants WHERE object_id = %s", table_id
            )
            live = await _fetch(catalog, "SELECT name FROM tables UNION ALL SELECT name FROM views ORDER BY 1")
            async with catalog.pool.connection() as conn:
                verified = [await verify_projection(conn, projection) for projection in (CATALOG, PERMISSIONS)]
                snapshots = [await replay(conn, position) for position in (before, dropped_at)]
            return restored, task, grants, live, verified, snapshots

    restored, task, grants, live, verified, snapshots = asyncio.run(scenario())
    assert sorted((item.kind, item.name) for item in restored) == [
        ("namespace", "eu"),
        ("namespace", "sales"),
        ("table", "orders"),
        ("view", "v"),
    ]
    assert task is None  # the undrop cancelled it
    assert ("user:alice", "select") in grants
    assert [row[0] for row in live] == ["orders", "v"]
    assert all(verification.identical for verification in verified), [v.diffs for v in verified]
    before, dropped = snapshots
    assert len(before.namespaces) == 2
    assert len(dropped.namespaces) == 0
    assert sum(len(objects) for objects in before.tabulars.values()) == 2
    assert sum(len(objects) for objects in dropped.tabulars.values()) == 0


def test_held_warehouse_is_deleted_with_its_contents_when_its_hold_runs_out(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ctx = dataclasses.replace(catalog.ctx, warehouse_hold_seconds=1)
            warehouse = catalog.warehouse_id
            await _soft(catalog, 3600)
            await handle_create_namespace(CreateNamespace(warehouse, NS, {}, META), ctx)
            await handle_create_table(CreateTable(warehouse, NS, "kept", SCHEMA, META), ctx)
            await handle_create_table(CreateTable(warehouse, NS, "hidden", SCHEMA, META), ctx)
            await handle_drop_table(DropTable(warehouse, NS, "hidden", None, META), ctx)
            await handle_delete_warehouse(DeleteWarehouse(warehouse, META, force=True), ctx)
            held = await _fetch(catalog, "SELECT name FROM deleted_warehouses")
            await asyncio.sleep(1.1)
            tasks = [await claim_task(ctx, ["tabular_expiration"], "test-worker", 30) for _ in range(2)]
            [task] = [task for task in tasks if task is not None and task.entity_type == "warehouse"]
            result = await expire_soft_dropped(task, ctx)
            left = await _fetch(
                catalog,
                "SELECT (SELECT count(*) FROM deleted_warehouses) + (SELECT count(*) FROM warehouses)"
                " + (SELECT count(*) FROM tables) + (SELECT count(*) FROM deleted_tabulars)"
                " + (SELECT count(*) FROM namespaces)",
            )
            async with catalog.pool.connection() as conn:
                verified = [await verify_projection(conn, projection) for projection in (CATALOG, PERMISSIONS)]
            return held, result, left, verified

    held, result, left, verified = asyncio.run(scenario())
    assert held == [("demo",)]
    assert result["dropped"] == 3  # the hidden table expires, the live table and namespace are dropped
    assert left == [(0,)]
    assert all(verification.identical for verification in verified), [v.diffs for v in verified]
