"""A table commit reads its warehouse from the cache the edge uses: one pool checkout plus the write transaction."""

from __future__ import annotations

import asyncio
import dataclasses

from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.catalog.warehouse_cache import WarehouseCache
from projections.registry import INLINE_PROJECTORS

META = EventMetadata(actor="tester")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


def test_commit_checks_out_one_connection_besides_the_transaction_when_the_warehouse_is_cached(open_catalog):
    cache = WarehouseCache()

    async def scenario() -> int:
        async with open_catalog(projectors=(*INLINE_PROJECTORS, cache.forget)) as catalog:
            ctx = dataclasses.replace(catalog.ctx, warehouses=cache)
            await handle_create_namespace(CreateNamespace(catalog.warehouse_id, DB, {}, META), ctx)
            await handle_create_table(CreateTable(catalog.warehouse_id, DB, "t", SCHEMA, META), ctx)

            def commit(key: str) -> CommitTable:
                updates = [{"action": "set-properties", "updates": {key: "v"}}]
                return CommitTable(catalog.warehouse_id, DB, "t", [], updates, META)

            await handle_commit_table(commit("warm"), ctx)
            catalog.pool.pop_stats()
            await handle_commit_table(commit("counted"), ctx)
            return int(catalog.pool.pop_stats().get("requests_num", 0))

    assert asyncio.run(scenario()) == 2
