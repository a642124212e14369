"""Protection against real PostgreSQL: flags on the objects' own streams, drops refused in their transaction,
commits unaffected, and the `protections` read model rebuilt and verified from the log alone."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from catalog_es.errors import CommitFailedError, NoSuchTableError, ProtectedError
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, DropNamespace, handle_create_namespace, handle_drop_namespace
from commands.protection import SetProtection, handle_set_protection
from commands.tabular_lifecycle import DropTable, handle_drop_table
from commands.warehouses import DeleteWarehouse, handle_delete_warehouse
from projections.protection import protected_inside
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG, PROTECTION
from projections.verify import verify_projection
from tests.integration.test_rebuild import SCHEMA

META = EventMetadata(actor="keeper")


def test_protection_blocks_drops_until_forced_and_rebuilds_from_the_log(open_catalog):
    async def scenario() -> dict[str, object]:
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            sales, eu = Namespace(("sales",)), Namespace(("sales", "eu"))
            await handle_create_namespace(CreateNamespace(wh, sales, {}, META), ctx)
            await handle_create_namespace(CreateNamespace(wh, eu, {}, META), ctx)
            created = await handle_create_table(CreateTable(wh, eu, "orders", SCHEMA, META), ctx)
            table_id = uuid.UUID(created.metadata["table-uuid"])
            async with catalog.pool.connection() as conn:
                namespace_id = (await ctx.state.namespace(conn, wh, sales)).id

            first = await handle_set_protection(SetProtection("table", wh, table_id, True, META), ctx)
            # The flag moved the table's stream on: a commit still finds the version it expects.
            commit = CommitTable(wh, eu, "orders", [], [{"action": "set-properties", "updates": {"k": "v"}}], META)
            await handle_commit_table(commit, ctx)
            with pytest.raises(ProtectedError, match=r"Table sales\.eu\.orders is protected"):
                await handle_drop_table(DropTable(wh, eu, "orders", False, META), ctx)
            with pytest.raises(ProtectedError, match=r"table sales\.eu\.orders is protected"):
                await handle_drop_namespace(DropNamespace(wh, sales, META), ctx)  # the subtree is checked
            await handle_set_protection(SetProtection("namespace", wh, namespace_id, True, META), ctx)
            await handle_set_protection(SetProtection("warehouse", wh, wh, True, META), ctx)
            with pytest.raises(ProtectedError, match="Warehouse 'demo' is protected"):
                await handle_delete_warehouse(DeleteWarehouse(wh, META), ctx)
            with pytest.raises(NoSuchTableError):
                await handle_set_protection(SetProtection("table", wh, uuid.uuid4(), True, META), ctx)
            with pytest.raises(NoSuchTableError):  # a namespace's id is not a table's
                await handle_set_protection(SetProtection("table", wh, namespace_id, True, META), ctx)

            async with catalog.pool.connection() as conn:
                inside = await protected_inside(conn, wh)
            await handle_drop_table(DropTable(wh, eu, "orders", False, META, force=True), ctx)
            async with catalog.pool.connection() as conn:
                after_drop = await protected_inside(conn, wh)
                verifications = [await verify_projection(conn, p) for p in (CATALOG, PROTECTION)]
                before = await (await conn.execute("SELECT * FROM protections ORDER BY id")).fetchall()
                await rebuild_projection(conn, PROTECTION)
                rebuilt = await (await conn.execute("SELECT * FROM protections ORDER BY id")).fetchall()
            return {
                "first": first,
                "inside": [(p.kind, p.name) for p in inside],
                "after_drop": [(p.kind, p.name) for p in after_drop],
                "verifications": verifications,
                "before": before,
                "rebuilt": rebuilt,
            }

    result = asyncio.run(scenario())
    assert result["first"].protected is True
    assert result["first"].updated_at is not None
    assert result["inside"] == [("namespace", "sales"), ("table", "sales.eu.orders")]
    assert result["after_drop"] == [("namespace", "sales")]  # the dropped table's row went with it
    assert all(v.identical for v in result["verifications"]), result["verifications"]
    assert result["rebuilt"] == result["before"]
    assert len(result["before"]) == 2  # the namespace and the warehouse


def test_protection_set_concurrently_with_a_drop_is_serialised_by_the_stream_version(open_catalog):
    async def scenario() -> list[object]:
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            ns = Namespace(("race",))
            await handle_create_namespace(CreateNamespace(wh, ns, {}, META), ctx)
            created = await handle_create_table(CreateTable(wh, ns, "t", SCHEMA, META), ctx)
            table_id = uuid.UUID(created.metadata["table-uuid"])
            outcomes = await asyncio.gather(
                handle_set_protection(SetProtection("table", wh, table_id, True, META), ctx),
                handle_drop_table(DropTable(wh, ns, "t", False, META), ctx),
                return_exceptions=True,
            )
            return list(outcomes)

    protected, dropped = asyncio.run(scenario())
    # Exactly one wins: either protection first (the drop is refused, or loses its version check), or the drop
    # first (the table no longer exists for the protection).
    if isinstance(dropped, BaseException):
        assert isinstance(dropped, ProtectedError | CommitFailedError | StreamVersionConflictError), dropped
        assert not isinstance(protected, BaseException)
    else:
        assert isinstance(protected, NoSuchTableError | CommitFailedError | StreamVersionConflictError), protected
