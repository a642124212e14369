"""loadTable's shared table statement: each request gets what its own statement would have read, also in a burst."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from psycopg import sql

from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.catalog.table_document_batch import _TABLES_AT_HEAD, TableDocumentBatch

META = EventMetadata(actor="batch")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


async def _tables(catalog, names: list[str]) -> None:
    await handle_create_namespace(CreateNamespace(catalog.warehouse_id, DB, {}, META), catalog.ctx)
    for name in names:
        await handle_create_table(CreateTable(catalog.warehouse_id, DB, name, SCHEMA, META), catalog.ctx)


async def _own(catalog, warehouse_id: uuid.UUID, namespace: Namespace, name: str):
    async with catalog.ctx.store.connection() as conn:
        return await catalog.ctx.state.table_document_at_head(conn, warehouse_id, namespace, name)


def test_a_burst_gets_each_table_as_its_own_statement_would_in_fewer_statements(open_catalog):
    names = [f"t{i}" for i in range(6)]
    asks = [(DB, n) for n in names] + [(DB, "missing"), (Namespace(("nowhere",)), "t0"), (DB, "T3")]

    async def scenario():
        async with open_catalog() as catalog:
            await _tables(catalog, names)
            batch = TableDocumentBatch(catalog.pool, statements=1)
            statements, read = [], batch._read

            async def counted(asked: list) -> list:
                statements.append(len(asked))
                return await read(asked)

            batch._batches._run = counted
            shared = await asyncio.gather(
                *(batch.table_document_at_head(catalog.warehouse_id, ns, name) for ns, name in asks * 3)
            )
            own = [await _own(catalog, catalog.warehouse_id, ns, name) for ns, name in asks * 3]
            return shared, own, statements

    shared, own, statements = asyncio.run(scenario())
    assert shared == own
    assert statements == [len(asks) * 3]  # asked in one loop turn: one statement
    found = [table for _, table in shared[: len(asks)]]
    assert [table is None for table in found] == [False] * 6 + [True, True, False]  # names compare case-insensitively
    assert found[3] == found[8]


def test_a_table_committed_before_it_is_asked_for_is_read_as_committed(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _tables(catalog, ["t"])
            batch = TableDocumentBatch(catalog.pool)
            head_before, before = await batch.table_document_at_head(catalog.warehouse_id, DB, "t")
            update = [{"action": "set-properties", "updates": {"k": "v"}}]
            await handle_commit_table(CommitTable(catalog.warehouse_id, DB, "t", [], update, META), catalog.ctx)
            head_after, after = await batch.table_document_at_head(catalog.warehouse_id, DB, "t")
            return head_before, before, head_after, after

    head_before, before, head_after, after = asyncio.run(scenario())
    assert before is not None
    assert after is not None
    assert head_before is not None
    assert head_after is not None
    assert head_after > head_before
    assert after[0] != before[0]
    assert b'"k":"v"' in after[1].replace(b" ", b"")


def test_a_failed_statement_fails_every_request_it_read_for_and_the_next_burst_is_read(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _tables(catalog, ["t"])
            batch = TableDocumentBatch(catalog.pool, statements=1)
            broken = TableDocumentBatch(catalog.pool, statements=1)
            broken._batches._run = _failing
            failures = await asyncio.gather(
                *(broken.table_document_at_head(catalog.warehouse_id, DB, "t") for _ in range(3)),
                return_exceptions=True,
            )
            return failures, await batch.table_document_at_head(catalog.warehouse_id, DB, "t")

    failures, after = asyncio.run(scenario())
    assert all(isinstance(failure, RuntimeError) for failure in failures)
    assert after[1] is not None


async def _failing(batch: list) -> list:
    raise RuntimeError("the database went away")


@pytest.mark.parametrize("statements", [1, 2])
def test_asks_made_while_statements_run_are_all_answered(open_catalog, statements: int):
    async def scenario():
        async with open_catalog() as catalog:
            await _tables(catalog, ["t"])
            batch = TableDocumentBatch(catalog.pool, statements=statements)

            async def ask_later(delay: float):
                await asyncio.sleep(delay)
                return await batch.table_document_at_head(catalog.warehouse_id, DB, "t")

            return await asyncio.wait_for(asyncio.gather(*(ask_later(i * 0.0005) for i in range(200))), 30)

    answers = asyncio.run(scenario())
    assert all(table is not None for _, table in answers)


def test_the_shared_statement_looks_each_table_up_by_its_keys_in_a_generic_plan(open_catalog):
    """A pooled connection keeps a generic plan after five runs: one that scanned every table of the catalog for a
    batch of a few names made each loadTable slower as the catalog grew."""

    async def scenario() -> str:
        async with open_catalog() as catalog:
            await _tables(catalog, [f"t{i}" for i in range(300)])
            asks = json.dumps([[str(catalog.warehouse_id), DB.key, "t7"]])
            async with catalog.ctx.store.connection() as conn:
                await conn.execute("ANALYZE tables")
                await conn.execute("ANALYZE namespaces")
                await conn.execute("SET plan_cache_mode = force_generic_plan")
                await conn.execute(b"PREPARE shared(text) AS " + _TABLES_AT_HEAD.replace(b"%s", b"$1"))
                cursor = await conn.execute(sql.SQL("EXPLAIN EXECUTE shared({})").format(sql.Literal(asks)))
                plan = "\n".join(str(row[0]) for row in await cursor.fetchall())
                await conn.execute("DEALLOCATE shared")
                await conn.execute("RESET plan_cache_mode")
            return plan

    plan = asyncio.run(scenario())
    assert "Seq Scan on tables" not in plan, plan
    assert "tables_namespace_id_name_key_key" in plan, plan
