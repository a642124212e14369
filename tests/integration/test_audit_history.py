"""Audit over the real log: as-of reproduces states captured during the test; history filters and pages."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta

from api.management.audit_params import event_filter
from catalog_es.events.maintenance import MaintenanceJobFinished, MaintenanceJobStarted
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.create_view import CreateView, handle_create_view
from commands.namespaces import (
    CreateNamespace,
    UpdateNamespaceProperties,
    handle_create_namespace,
    handle_update_namespace_properties,
)
from commands.tabular_lifecycle import DropTable, RenameTable, handle_drop_table, handle_rename_table
from projections.audit.as_of import catalog_as_of
from projections.audit.history import EventFilter, entity_history, read_event_page

ALICE, BOB = EventMetadata(actor="alice"), EventMetadata(actor="bob")
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
SALES, EU = Namespace(("sales",)), Namespace(("sales", "eu"))
SNAPSHOT_ID = 4_242_424_242
VIEW_VERSION = {
    "version-id": 1,
    "schema-id": 0,
    "timestamp-ms": 1_700_000_000_000,
    "summary": {},
    "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}],
    "default-namespace": ["sales"],
}


async def _live_state(conn):
    """The live read model, read with SQL of its own (not the as-of code's)."""
    namespaces = await (await conn.execute("SELECT parts, properties FROM public.namespaces")).fetchall()
    tables = await (
        await conn.execute(
            "SELECT n.parts, t.name, t.metadata_location, (t.metadata->>'current-snapshot-id')::bigint"
            " FROM public.tables t JOIN public.namespaces n ON n.id = t.namespace_id"
        )
    ).fetchall()
    views = await (
        await conn.execute(
            "SELECT n.parts, v.name, v.metadata_location, (v.metadata->>'current-version-id')::int"
            " FROM public.views v JOIN public.namespaces n ON n.id = v.namespace_id"
        )
    ).fetchall()
    return (
        sorted((tuple(parts), properties) for parts, properties in namespaces),
        sorted((tuple(parts), name, location, snapshot) for parts, name, location, snapshot in tables),
        sorted((tuple(parts), name, location, version) for parts, name, location, version in views),
    )


def _as_of_state(state):
    namespaces = sorted((tuple(ns.namespace), ns.properties) for ns in state.namespaces)
    tables = sorted((tuple(t.namespace), t.name, t.metadata_location, t.current_snapshot_id) for t in state.tables)
    views = sorted((tuple(v.namespace), v.name, v.metadata_location, v.current_version_id) for v in state.views)
    return namespaces, tables, views


async def _scenario(catalog):
    """Each step, then the instant after it and the live state at that instant."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    captured = []

    async def capture():
        await asyncio.sleep(0.002)
        at = datetime.now(UTC)
        async with catalog.pool.connection() as conn:
            captured.append((at, await _live_state(conn)))
        await asyncio.sleep(0.002)

    await capture()
    await handle_create_namespace(CreateNamespace(wh, SALES, {"owner": "alice"}, ALICE), ctx)
    await handle_create_namespace(CreateNamespace(wh, EU, {}, ALICE), ctx)
    await capture()
    orders = await handle_create_table(CreateTable(wh, EU, "orders", SCHEMA, ALICE), ctx)
    await capture()
    location = orders.metadata["location"]
    snapshot = {
        "snapshot-id": SNAPSHOT_ID,
        "timestamp-ms": int(time.time() * 1000),
        "sequence-number": 1,
        "summary": {"operation": "append"},
        "manifest-list": f"{location}/metadata/snap-{SNAPSHOT_ID}.avro",
        "schema-id": 0,
    }
    await handle_commit_table(
        CommitTable(
            wh,
            EU,
            "orders",
            [],
            [
                {"action": "add-snapshot", "snapshot": snapshot},
                {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": SNAPSHOT_ID},
                {"action": "set-properties", "updates": {"quality": "gold"}},
            ],
            BOB,
        ),
        ctx,
    )
    await capture()
    await handle_update_namespace_properties(UpdateNamespaceProperties(wh, SALES, {"owner": "bob"}, [], BOB), ctx)
    await handle_rename_table(RenameTable(wh, EU, "orders", SALES, "orders_all", BOB), ctx)
    await capture()
    await handle_create_table(CreateTable(wh, SALES, "scratch", SCHEMA, ALICE), ctx)
    await handle_drop_table(DropTable(wh, SALES, "orders_all", False, ALICE), ctx)
    await capture()
    await handle_create_view(CreateView(wh, SALES, "v", SCHEMA, VIEW_VERSION, BOB), ctx)
    await capture()
    return orders.metadata["table-uuid"], captured


def test_as_of_reproduces_captured_states_when_replayed_to_each_instant(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            _, captured = await _scenario(catalog)
            async with catalog.pool.connection() as conn:
                replayed = [_as_of_state(await catalog_as_of(conn, at)) for at, _ in captured]
                before = await catalog_as_of(conn, captured[0][0] - timedelta(days=1))
                live = await _live_state(conn)
            return captured, replayed, before, live

    captured, replayed, before, live = asyncio.run(scenario())
    assert [state for _, state in captured] == replayed
    assert len({repr(state) for _, state in captured}) == len(captured), "every step changes the catalog"
    assert replayed[3][1][0][3] == SNAPSHOT_ID
    assert replayed[-1][2][0][3] == 1, "views are reconstructed with their current version"
    assert (before.position, before.namespaces, before.tables) == (0, [], [])
    assert live == captured[-1][1], "as-of leaves the live read model untouched"


def test_history_filters_and_pages_when_log_has_several_entities(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            table_uuid, captured = await _scenario(catalog)
            async with catalog.pool.connection() as conn:

                async def types(where, **kwargs):
                    page = await read_event_page(conn, where, **kwargs)
                    return [e.type.split(".")[2] + "." + e.type.split(".")[3] for e in page.events]

                results = {
                    "eu": await types(EventFilter(namespace=["sales", "eu"])),
                    "orders": await types(EventFilter(table_name="orders")),
                    "view_v": await types(EventFilter(view_name="v")),
                    "table_v": await types(EventFilter(table_name="v")),
                    "bob": await types(EventFilter(actor="bob")),
                    "commits": await types(EventFilter(types=["io.catalog-es.table.committed.v1"])),
                    "window": await types(EventFilter(since=captured[2][0], until=captured[4][0])),
                    "warehouse_by_name": len((await read_event_page(conn, EventFilter(warehouse="demo"))).events),
                    "all": len((await read_event_page(conn, EventFilter(), limit=1000)).events),
                }
                pages, after = [], 0
                while after is not None:
                    page = await read_event_page(conn, EventFilter(), after=after, limit=3)
                    pages.append([e.position for e in page.events])
                    after = page.next_after
                history = await entity_history(conn, f"table-{table_uuid}")
            return results, pages, history

    results, pages, history = asyncio.run(scenario())
    table_life = ["table.created", "table.committed", "table.renamed", "table.dropped"]
    assert results["eu"] == ["namespace.created", *table_life]
    assert results["orders"] == table_life
    assert (results["view_v"], results["table_v"]) == (["view.created"], [])
    assert results["bob"] == ["table.committed", "namespace.properties-updated", "table.renamed", "view.created"]
    assert results["commits"] == ["table.committed"]
    assert results["window"] == ["table.committed", "namespace.properties-updated", "table.renamed"]
    assert results["warehouse_by_name"] == results["all"] - 1  # all but the project's own event
    assert [p for page in pages for p in page] == list(range(1, results["all"] + 1))
    assert all(len(page) <= 3 for page in pages)
    assert [(entry.actor, entry.type.split(".")[3]) for entry in history] == [
        ("alice", "created"),
        ("bob", "committed"),
        ("bob", "renamed"),
        ("alice", "dropped"),
    ]
    assert history[1].summary.snapshots_added == [SNAPSHOT_ID]
    assert history[1].summary.properties_set == {"quality": "gold"}


def test_a_table_found_by_dotted_name_brings_its_maintenance_jobs_when_the_route_or_cli_names_it(open_catalog):
    """`table=sales.orders` (the route) and `--table sales.orders` (the CLI) find the table, its jobs included."""

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, SALES, {}, ALICE), ctx)
            await handle_create_namespace(CreateNamespace(wh, EU, {}, ALICE), ctx)
            created = await handle_create_table(CreateTable(wh, SALES, "orders", SCHEMA, ALICE), ctx)
            await handle_create_table(CreateTable(wh, EU, "orders", SCHEMA, ALICE), ctx)  # same name elsewhere
            table_id = uuid.UUID(created.metadata["table-uuid"])
            job = {"table_id": table_id, "warehouse_id": wh, "job_id": uuid.uuid4(), "policy_type": "x", "attempt": 1}
            for event in (
                MaintenanceJobStarted(**job, trigger={"kind": "manual"}),
                MaintenanceJobFinished(**job, outcome="succeeded", metrics={}),
            ):
                async with ctx.store.transaction(EventMetadata(actor="system:maintenance")) as tx:
                    await tx.append(event, expected_version=await tx.stream_version(f"maintenance-{table_id}"))
            async with catalog.pool.connection() as conn:

                async def found(**criteria):
                    page = await read_event_page(conn, event_filter(**criteria), limit=1000)
                    return [(e.stream_id.partition("-")[0], e.type.split(".")[-2]) for e in page.events]

                return {
                    "dotted": await found(table="sales.orders"),
                    "by_id": await found(table=str(table_id)),
                    "namespace": await found(namespace=["sales"], table="orders"),
                    "eu": await found(table="sales.eu.orders"),
                }

    results = asyncio.run(scenario())
    expected = [("table", "created"), ("maintenance", "started"), ("maintenance", "finished")]
    assert results["dotted"] == results["by_id"] == results["namespace"] == expected
    assert results["eu"] == [("table", "created")]


def test_history_names_column_changes_when_a_commit_records_only_its_change(open_catalog):
    db = Namespace(("cols",))
    evolved = {
        "type": "struct",
        "schema-id": 1,
        "fields": [
            {"id": 1, "name": "id", "type": "long", "required": False},
            {"id": 2, "name": "region", "type": "string", "required": False},
        ],
    }

    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, db, {}, ALICE), ctx)
            created = await handle_create_table(CreateTable(wh, db, "t", SCHEMA, ALICE), ctx)
            updates = [{"action": "add-schema", "schema": evolved}, {"action": "set-current-schema", "schema-id": -1}]
            requirements = [{"type": "assert-current-schema-id", "current-schema-id": 0}]
            await handle_commit_table(CommitTable(wh, db, "t", requirements, updates, ALICE), ctx)
            async with catalog.store.connection() as conn:
                return await entity_history(conn, f"table-{created.metadata['table-uuid']}")

    history = asyncio.run(scenario())
    commit = history[-1]
    assert commit.type == "io.catalog-es.table.committed.v2"
    assert commit.summary is not None
    assert commit.summary.columns_added == ["region"]
    assert commit.summary.schemas_added == [1]
