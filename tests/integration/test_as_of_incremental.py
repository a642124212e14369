"""As-of snapshots replayed from a cached earlier one equal those replayed from the start, and leave it unchanged."""

from __future__ import annotations

import asyncio

import pytest

from catalog_es.identifiers import Namespace
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import (
    CreateNamespace,
    DropNamespace,
    UpdateNamespaceProperties,
    handle_create_namespace,
    handle_drop_namespace,
    handle_update_namespace_properties,
)
from commands.tabular_lifecycle import DropTable, RenameTable, handle_drop_table, handle_rename_table
from projections.catalog.as_of import AsOfCache, FuturePositionError, Snapshot, replay
from tests.integration.conftest import META, Catalog, OpenCatalog
from tests.integration.test_audit_cli import SCHEMA

SALES, STAGING = Namespace(("sales",)), Namespace(("staging",))


async def _head(catalog: Catalog) -> int:
    async with catalog.pool.connection() as conn:
        cursor = await conn.execute("SELECT position FROM catalog_event_counter")
        row = await cursor.fetchone()
        assert row is not None
        return int(row[0])


async def _history(catalog: Catalog) -> list[int]:
    """Creates, commits, renames, property updates and drops; the head position after each step."""
    w, ctx, heads = catalog.warehouse_id, catalog.ctx, [await _head(catalog)]
    await handle_create_namespace(CreateNamespace(w, SALES, {"owner": "a"}, META), ctx)
    await handle_create_namespace(CreateNamespace(w, STAGING, {}, META), ctx)
    heads.append(await _head(catalog))
    for name in ("orders", "items", "tmp"):
        await handle_create_table(CreateTable(w, SALES, name, SCHEMA, META), ctx)
    heads.append(await _head(catalog))
    props = [{"action": "set-properties", "updates": {"k": "1"}}]
    await handle_commit_table(CommitTable(w, SALES, "orders", [], props, META), ctx)
    await handle_update_namespace_properties(UpdateNamespaceProperties(w, SALES, {"owner": "b"}, ["x"], META), ctx)
    heads.append(await _head(catalog))
    await handle_rename_table(RenameTable(w, SALES, "items", STAGING, "items_v2", META), ctx)
    await handle_commit_table(CommitTable(w, STAGING, "items_v2", [], props, META), ctx)
    await handle_drop_table(DropTable(w, SALES, "tmp", False, META), ctx)
    heads.append(await _head(catalog))
    await handle_drop_table(DropTable(w, STAGING, "items_v2", False, META), ctx)
    await handle_drop_namespace(DropNamespace(w, STAGING, META), ctx)
    await handle_create_table(CreateTable(w, SALES, "tmp", SCHEMA, META), ctx)
    heads.append(await _head(catalog))
    return heads


def _names(snapshot: Snapshot) -> dict[str, object]:
    return {
        "namespaces": sorted((row.parts, sorted(row.properties.items())) for row in snapshot.namespaces.values()),
        "tables": sorted((t.name, t.metadata_position) for t in snapshot.tabulars["table"].values()),
    }


def test_incremental_replay_equals_a_replay_from_the_start(open_catalog: OpenCatalog) -> None:
    async def run() -> None:
        async with open_catalog() as catalog, catalog.pool.connection() as conn:
            heads = await _history(catalog)
            cache = AsOfCache(size=2)
            for position in heads:  # forward: each from the snapshot before it
                assert await cache.get(conn, position) == await replay(conn, position), position
            for base_at in heads:  # every (earlier, later) pair, and the earlier snapshot stays as it was
                base = await replay(conn, base_at)
                before = _names(base)
                for later in (p for p in heads if p >= base_at):
                    assert await replay(conn, later, base) == await replay(conn, later), (base_at, later)
                assert _names(base) == before
            final = await cache.get(conn, heads[-1])
            assert [(row.parts, row.properties["owner"]) for row in final.namespaces.values()] == [(["sales"], "b")]
            assert {t.name for t in final.tabulars["table"].values()} == {"orders", "tmp"}
            # An earlier position than any cached one is replayed from the start; a cached one cannot go back.
            assert await cache.get(conn, heads[1]) == await replay(conn, heads[1])
            with pytest.raises(ValueError, match="cannot be replayed back"):
                await replay(conn, heads[1], final)
            with pytest.raises(FuturePositionError):
                await cache.get(conn, heads[-1] + 100)

    asyncio.run(run())
