"""Iceberg's metadata retention: with `write.metadata.delete-after-commit.enabled`, the previous metadata files a
commit drops from the log (past `write.metadata.previous-versions-max`) are deleted by the task queue, unless a
table (live, or soft-dropped and still restorable) still refers to them when the task runs; without it every file
stays (Iceberg's default)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.builtin_tasks import builtin_task_handlers
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import DropTable, RegisterTable, handle_drop_table, handle_register_table
from commands.tabulars import require_metadata_file
from commands.task_handlers import METADATA_CLEANUP
from commands.tasks import claim_task, complete_task
from commands.undrop import UndropTabulars, UndropTarget, handle_undrop_tabulars
from commands.warehouses import UpdateDeleteProfile, handle_update_delete_profile

META = EventMetadata(actor="retention")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _path(location: str) -> Path:
    return Path(location.removeprefix("file://"))


async def _run_cleanups(ctx) -> list[dict[str, Any]]:
    handler = builtin_task_handlers()[METADATA_CLEANUP]
    results = []
    while (task := await claim_task(ctx, [METADATA_CLEANUP], "test-worker", 30)) is not None:
        result = await handler(task, ctx)
        assert await complete_task(ctx, task, result)
        results.append(result)
    return results


async def _table(catalog, name: str, properties: dict[str, str], commits: int) -> list[str]:
    """Create and commit `commits` times; the metadata locations, oldest first."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    created = await handle_create_table(CreateTable(wh, DB, name, SCHEMA, META, properties=properties), ctx)
    locations = [created.metadata_location]
    for step in range(commits):
        updates = [{"action": "set-properties", "updates": {"step": str(step)}}]
        result = await handle_commit_table(CommitTable(wh, DB, name, [], updates, META), ctx)
        locations.append(result.metadata_location)
    return locations


def test_dropped_metadata_files_are_deleted_when_the_table_asks_for_it(open_catalog):
    retained = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "2"}

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
            kept_by_default = await _table(catalog, "plain", {}, 5)
            locations = await _table(catalog, "retained", retained, 1)
            locations += await _table_more(catalog, "retained", 4)
            results = await _run_cleanups(ctx)
            return kept_by_default, locations, results

    kept_by_default, locations, results = asyncio.run(scenario())
    assert all(_path(location).exists() for location in kept_by_default)  # Iceberg's default: nothing deleted
    # The current file and the two the log keeps remain; the older ones go.
    assert [_path(location).exists() for location in locations] == [False, False, False, True, True, True]
    assert sum(result["deleted"] for result in results) == 3
    assert sum(result["kept"] for result in results) == 0


async def _table_more(catalog, name: str, commits: int, properties: dict[str, str] | None = None) -> list[str]:
    locations = []
    for step in range(commits):
        updates = [{"action": "set-properties", "updates": {"more": str(step), **(properties or {})}}]
        result = await handle_commit_table(CommitTable(catalog.warehouse_id, DB, name, [], updates, META), catalog.ctx)
        locations.append(result.metadata_location)
    return locations


def test_a_queued_cleanup_keeps_a_file_the_table_was_registered_back_onto(open_catalog):
    """Retention never deletes a file a table still needs: the commit schedules the file it dropped from the log,
    and before the worker runs the task the table is registered (overwrite) back onto that very file. Deleting it
    would leave the table pointing at nothing (every load and commit a 404)."""
    retained = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "1"}

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
            locations = await _table(catalog, "rolled_back", retained, 2)  # the second commit drops the first file
            first = locations[0]
            await handle_register_table(RegisterTable(wh, DB, "rolled_back", first, True, META), ctx)
            results = await _run_cleanups(ctx)
            async with ctx.store.connection() as conn:
                row = await ctx.state.table(conn, wh, DB, "rolled_back")
            return locations, results, row

    locations, results, row = asyncio.run(scenario())
    assert row is not None
    assert row.metadata_location == locations[0]
    assert [result["kept"] for result in results] == [1]  # the commit did schedule it; the task kept it
    assert sum(result["deleted"] for result in results) == 0
    assert all(_path(location).exists() for location in locations)


def test_a_queued_cleanup_keeps_a_file_the_table_logs_again(open_catalog):
    """The same for a file the table's metadata log names again (registered back onto a file that logs it)."""
    retained = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "1"}

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
            locations = await _table(catalog, "relogged", retained, 3)  # commits 2 and 3 drop files 0 and 1
            await handle_register_table(RegisterTable(wh, DB, "relogged", locations[2], True, META), ctx)
            results = await _run_cleanups(ctx)
            return locations, results

    locations, results = asyncio.run(scenario())
    # Registered onto file 2, whose log names file 1: file 1 stays; file 0, which nothing names, goes.
    assert [_path(location).exists() for location in locations] == [False, True, True, True]
    assert sum(result["deleted"] for result in results) == 1
    assert sum(result["kept"] for result in results) == 1


async def _soft_drop(catalog, name: str) -> None:
    profile = {"type": "soft", "expiration-seconds": 3600}
    await handle_update_delete_profile(UpdateDeleteProfile(catalog.warehouse_id, profile, META), catalog.ctx)
    await handle_drop_table(DropTable(catalog.warehouse_id, DB, name, None, META), catalog.ctx)


async def _table_id(catalog, name: str) -> uuid.UUID:
    async with catalog.ctx.store.connection() as conn:
        row = await catalog.ctx.state.table(conn, catalog.warehouse_id, DB, name)
    assert row is not None
    return row.id


async def _undrop(catalog, name: str, table_id: uuid.UUID) -> str:
    """Undrop the table and load it: its metadata location (loading reads the file, as a client's load does)."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    await handle_undrop_tabulars(UndropTabulars(wh, [UndropTarget("table", table_id)], META), ctx)
    async with ctx.store.connection() as conn:
        row = await ctx.state.table(conn, wh, DB, name)
    assert row is not None
    storage = await ctx.storage(await ctx.warehouse(wh))
    await require_metadata_file(ctx, storage, row.metadata_location)
    return row.metadata_location


def test_a_queued_cleanup_keeps_the_file_of_a_soft_dropped_table(open_catalog):
    """A soft-dropped table can still be restored, onto the file it pointed at when dropped: its own commit's
    retention, queued before it was registered back onto that file and dropped, must not delete it."""
    retained = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "1"}

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
            locations = await _table(catalog, "dropped", retained, 2)  # the second commit drops the first file
            registered = await handle_register_table(RegisterTable(wh, DB, "dropped", locations[0], True, META), ctx)
            table_id = uuid.UUID(registered.metadata["table-uuid"])
            await _soft_drop(catalog, "dropped")
            results = await _run_cleanups(ctx)
            return locations, results, await _undrop(catalog, "dropped", table_id)

    locations, results, restored = asyncio.run(scenario())
    assert [result["kept"] for result in results] == [1]  # the commit did schedule it; the task kept it
    assert sum(result["deleted"] for result in results) == 0
    assert all(_path(location).exists() for location in locations)
    assert restored == locations[0]


def test_a_queued_cleanup_keeps_a_file_a_soft_dropped_table_logs(open_catalog):
    """The same for a file the soft-dropped table's metadata log names: it is the table's history once restored."""
    retained = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "1"}

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
            locations = await _table(catalog, "dropped", retained, 3)  # commits 2 and 3 drop files 0 and 1
            registered = await handle_register_table(RegisterTable(wh, DB, "dropped", locations[2], True, META), ctx)
            table_id = uuid.UUID(registered.metadata["table-uuid"])
            await _soft_drop(catalog, "dropped")
            results = await _run_cleanups(ctx)
            return locations, results, await _undrop(catalog, "dropped", table_id)

    locations, results, restored = asyncio.run(scenario())
    # Dropped while on file 2, whose log names file 1: file 1 stays; file 0, which nothing names, goes.
    assert [_path(location).exists() for location in locations] == [False, True, True, True]
    assert sum(result["deleted"] for result in results) == 1
    assert sum(result["kept"] for result in results) == 1
    assert restored == locations[2]


def test_another_tables_cleanup_keeps_the_files_of_a_soft_dropped_table(open_catalog):
    """A table registered onto a soft-dropped table's file, with retention, lets go of that file and the one it logs;
    the dropped table (restorable once the adopter, which took its id, is gone) points at the first and logs the
    second: both stay."""
    retained = {"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "1"}

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
            locations = await _table(catalog, "dropped", {}, 1)
            await _soft_drop(catalog, "dropped")
            await handle_register_table(RegisterTable(wh, DB, "adopter", locations[1], False, META), ctx)
            await _table_more(catalog, "adopter", 1, retained)
            await _table_more(catalog, "adopter", 2)  # with one previous version kept: both of dropped's files go
            results = await _run_cleanups(ctx)
            async with ctx.store.connection() as conn:
                cursor = await conn.execute("SELECT metadata_location FROM deleted_tabulars")
                dropped = [row[0] for row in await cursor.fetchall()]
            return locations, results, dropped

    locations, results, dropped = asyncio.run(scenario())
    assert dropped == [locations[1]]
    assert [result["kept"] for result in results] == [1, 1, 0]  # the adopter's first two commits let them go
    assert sum(result["deleted"] for result in results) == 1  # the adopter's own first file
    assert all(_path(location).exists() for location in locations)
