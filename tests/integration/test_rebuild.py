"""Rebuild: replaying the log into fresh tables reproduces every live read model row for row."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import psycopg
import psycopg.sql

from catalog_es.events import EVENT_TYPES
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from catalog_es.store.secrets import SecretStore, generate_secrets_key, parse_secrets_key
from commands.bootstrap import Bootstrap, handle_bootstrap
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
from commands.projects import (
    CreateProject,
    DeleteProject,
    RenameProject,
    handle_create_project,
    handle_delete_project,
    handle_rename_project,
)
from commands.tabular_lifecycle import (
    DropTable,
    RegisterTable,
    RenameTable,
    handle_drop_table,
    handle_register_table,
    handle_rename_table,
)
from commands.warehouses import (
    CreateWarehouse,
    DeleteWarehouse,
    RenameWarehouse,
    SetWarehouseActive,
    UpdateCredential,
    UpdateDeleteProfile,
    UpdateScanPlanning,
    UpdateServerSideRebase,
    UpdateStorage,
    handle_create_warehouse,
    handle_delete_warehouse,
    handle_rename_warehouse,
    handle_set_warehouse_active,
    handle_update_credential,
    handle_update_delete_profile,
    handle_update_scan_planning,
    handle_update_server_side_rebase,
    handle_update_storage,
)
from projections.catalog.projector import READ_MODEL_TABLES
from projections.registry import CATALOG
from projections.replay import scratch_schema
from projections.verify import verify_projection

META = EventMetadata(actor="rebuilder")
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "ts", "type": "timestamp", "required": False},
    ],
}
SCHEMA_V2 = {
    "type": "struct",
    "schema-id": 1,
    "fields": [*SCHEMA["fields"], {"id": 3, "name": "note", "type": "string", "required": False}],
}


async def _build_catalog(catalog) -> None:
    """A history with every event type: namespaces, properties, commits, renames, drops, a staged create, a register."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    sales, eu, tmp = Namespace(("Sales",)), Namespace(("Sales", "EU")), Namespace(("tmp",))
    for namespace, properties in ((sales, {"owner": "alice"}), (eu, {"region": "eu"}), (tmp, {})):
        await handle_create_namespace(CreateNamespace(wh, namespace, properties, META), ctx)
    await handle_update_namespace_properties(
        UpdateNamespaceProperties(wh, sales, {"owner": "bob", "tier": "gold"}, ["missing"], META), ctx
    )

    orders = await handle_create_table(
        CreateTable(
            wh,
            eu,
            "Orders",
            SCHEMA,
            META,
            partition_spec={"fields": [{"source-id": 2, "transform": "day", "name": "ts_day"}]},
            write_order={
                "order-id": 1,
                "fields": [{"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}],
            },
            properties={"format-version": "2"},
        ),
        ctx,
    )
    table_uuid = orders.metadata["table-uuid"]
    await handle_commit_table(
        CommitTable(
            wh,
            eu,
            "orders",
            [
                {"type": "assert-table-uuid", "uuid": table_uuid},
                {"type": "assert-current-schema-id", "current-schema-id": 0},
            ],
            [
                {"action": "add-schema", "schema": SCHEMA_V2, "last-column-id": 3},
                {"action": "set-current-schema", "schema-id": -1},
                {"action": "set-properties", "updates": {"comment": "evolved"}},
            ],
            META,
        ),
        ctx,
    )
    snapshot_id = 8_123_456_789_012_345
    location = orders.metadata["location"]
    await handle_commit_table(
        CommitTable(
            wh,
            eu,
            "ORDERS",
            [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
            [
                {
                    "action": "add-snapshot",
                    "snapshot": {
                        "snapshot-id": snapshot_id,
                        "timestamp-ms": 1_700_000_000_000,
                        "sequence-number": 1,
                        "summary": {"operation": "append", "added-records": "10"},
                        "manifest-list": f"{location}/metadata/snap-{snapshot_id}.avro",
                        "schema-id": 1,
                    },
                },
                {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
            ],
            META,
        ),
        ctx,
    )
    await handle_rename_table(RenameTable(wh, eu, "orders", sales, "orders_eu", META), ctx)

    await handle_create_table(CreateTable(wh, tmp, "scratch", SCHEMA, META), ctx)
    await handle_drop_table(DropTable(wh, tmp, "scratch", True, META), ctx)
    await handle_drop_namespace(DropNamespace(wh, tmp, META), ctx)

    # A staged create (Spark's CTAS): the commit that asserts the table does not exist yet creates it.
    staged_uuid = uuid.uuid4()
    await handle_commit_table(
        CommitTable(
            wh,
            sales,
            "ctas",
            [{"type": "assert-create"}],
            [
                {"action": "assign-uuid", "uuid": str(staged_uuid)},
                {"action": "upgrade-format-version", "format-version": 2},
                {"action": "add-schema", "schema": SCHEMA, "last-column-id": 2},
                {"action": "set-current-schema", "schema-id": -1},
                {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                {"action": "set-default-spec", "spec-id": -1},
                {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                {"action": "set-default-sort-order", "sort-order-id": -1},
                {"action": "set-location", "location": f"{catalog.warehouse_dir.as_uri()}/ctas"},
                {"action": "set-properties", "updates": {"created-by": "spark"}},
            ],
            META,
        ),
        ctx,
    )

    # Drop without purge, then adopt the last metadata file again under a new name.
    legacy = await handle_create_table(CreateTable(wh, sales, "legacy", SCHEMA, META), ctx)
    await handle_drop_table(DropTable(wh, sales, "legacy", False, META), ctx)
    await handle_register_table(RegisterTable(wh, eu, "legacy_again", legacy.metadata_location, False, META), ctx)
    await _manage(catalog)


async def _manage(catalog) -> None:
    """Bootstrap, projects and warehouses through every management event type."""
    ctx = dataclasses.replace(catalog.ctx, secrets=SecretStore(parse_secrets_key(generate_secrets_key())))
    await handle_bootstrap(Bootstrap(accept_terms_of_use=True, is_operator=True, metadata=META), ctx)
    project = await handle_create_project(CreateProject("Analytics", META), ctx)
    await handle_rename_project(RenameProject(project, "BI", META), ctx)
    doomed = await handle_create_project(CreateProject("short-lived", META), ctx)
    await handle_delete_project(DeleteProject(doomed, META), ctx)

    base = catalog.warehouse_dir.parent
    profile = {"type": "file", "location": str(base / "bi")}  # a credential would not fit a file profile (400)
    bi = await handle_create_warehouse(
        CreateWarehouse(project_id=project, name="bi", storage_profile=profile, metadata=META), ctx
    )
    await handle_rename_warehouse(RenameWarehouse(bi, "BI-Lake", META), ctx)
    await handle_set_warehouse_active(SetWarehouseActive(bi, active=False, metadata=META), ctx)
    await handle_set_warehouse_active(SetWarehouseActive(bi, active=True, metadata=META), ctx)
    await handle_update_delete_profile(UpdateDeleteProfile(bi, {"type": "soft", "expiration-seconds": 60}, META), ctx)
    await handle_update_server_side_rebase(UpdateServerSideRebase(bi, "on", META), ctx)
    await handle_update_scan_planning(UpdateScanPlanning(bi, "server", META), ctx)
    await handle_update_storage(UpdateStorage(warehouse_id=bi, storage_profile=profile, metadata=META), ctx)
    await handle_update_credential(UpdateCredential(warehouse_id=bi, storage_credential=None, metadata=META), ctx)

    scratch = await handle_create_warehouse(
        CreateWarehouse(
            project_id=project,
            name="scratch",
            storage_profile={"type": "file", "location": str(base / "s")},
            metadata=META,
        ),
        ctx,
    )
    await handle_create_namespace(CreateNamespace(scratch, Namespace(("a",)), {}, META), ctx)
    await handle_create_namespace(CreateNamespace(scratch, Namespace(("a", "b")), {}, META), ctx)
    await handle_create_table(CreateTable(scratch, Namespace(("a", "b")), "t", SCHEMA, META), ctx)
    await handle_delete_warehouse(DeleteWarehouse(scratch, META, force=True), ctx)


def test_rebuild_reproduces_every_read_model_when_log_is_replayed(open_catalog, migrated_dsn):
    async def scenario():
        async with open_catalog() as catalog:
            await _build_catalog(catalog)
            head = await catalog.store.head()
            async with catalog.pool.connection() as conn:
                verification = await verify_projection(conn, CATALOG)
                live = await _rows(conn)
            return head, verification, live

    head, verification, live = asyncio.run(scenario())
    assert verification.position == head
    assert [diff.table for diff in verification.diffs] == list(READ_MODEL_TABLES)
    assert verification.identical, [d for d in verification.diffs if d.only_live or d.only_replay]
    rebuilt = live  # identical, row for row (EXCEPT ALL both ways)
    assert (
        set(live)
        == set(READ_MODEL_TABLES)
        == {"server_info", "projects", "warehouses", "namespaces", "tables", "table_document_entries", "views"}
        | {"deleted_tabulars", "deleted_namespaces", "deleted_warehouses"}  # tests/integration/test_soft_delete.py
    )
    for table in READ_MODEL_TABLES:
        # Views (and their events) are exercised by test_views_rebuild.py, on top of this scenario; soft
        # deletion's relations by test_soft_delete.py (verified after soft drops, undrops and expiry).
        exercised_elsewhere = ("views", "deleted_tabulars", "deleted_namespaces", "deleted_warehouses")
        assert live[table] or table in exercised_elsewhere, f"live {table} is empty: the scenario does not exercise it"
        assert rebuilt[table] == live[table], f"rebuilt {table} differs from the live read model"
    assert len(live["namespaces"]) == 2
    assert len(live["tables"]) == 3

    with psycopg.connect(migrated_dsn) as conn:
        types = {row[0] for row in conn.execute("SELECT DISTINCT type FROM catalog_events")}
        columns = [
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public'"
                " AND table_name = 'tables' ORDER BY ordinal_position"
            )
        ]
    catalog_types = {  # the current versions: a retired one is only ever read (tests/integration/test_mixed_log.py)
        name
        for name, cls in EVENT_TYPES.items()
        if cls.__module__ == "catalog_es.events.catalog" and cls.type_name == name
    }
    # The purged drop also schedules its purge task (task events: tests/integration/test_task_queue.py).
    assert types - {"io.catalog-es.task.scheduled.v1"} == {name for name in catalog_types if ".view." not in name}
    # Full table metadata takes part in the comparison: the head in `tables`, the snapshots and logs (by position) in
    # `table_document_entries`.
    metadata = {row[columns.index("name")]: row[columns.index("metadata")] for row in rebuilt["tables"]}
    assert metadata["orders_eu"]["current-snapshot-id"] == 8_123_456_789_012_345
    assert metadata["orders_eu"]["current-schema-id"] == 1
    assert metadata["ctas"]["properties"]["created-by"] == "spark"


def test_rebuild_gives_empty_read_models_when_log_is_empty(open_catalog):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog, catalog.pool.connection() as conn:
            verification = await verify_projection(conn, CATALOG)
            return verification, await _rows(conn)

    verification, rows = asyncio.run(scenario())
    assert verification.position == 0
    assert verification.identical
    assert rows == {table: [] for table in READ_MODEL_TABLES}


def test_scratch_schema_leaves_no_schema_and_the_search_path_as_it_was(open_catalog):
    async def scenario():
        async with open_catalog() as catalog, catalog.pool.connection() as conn:
            before = await _one(conn, "SELECT current_setting('search_path')")
            async with scratch_schema(conn, CATALOG, purpose="rebuild_twice") as schema:
                inside = await _one(conn, "SELECT current_schema()")
                counted = await _one(conn, "SELECT count(*) FROM tables")
            after = await _one(conn, "SELECT current_setting('search_path')")
            left = await _one(conn, f"SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'")
            return schema, inside, counted, before, after, left

    schema, inside, counted, before, after, left = asyncio.run(scenario())
    assert inside == schema == "rebuild_twice_catalog"
    assert counted == 0  # the scratch tables shadow the live ones, which hold the bootstrap's rows
    assert (after, left) == (before, 0)


async def _one(conn, query):
    cursor = await conn.execute(query)
    return (await cursor.fetchone())[0]


async def _rows(conn):
    """Every row of every live catalog read model, in a stable order."""
    rows = {}
    for table in READ_MODEL_TABLES:
        order = "table_id, list, ordinal" if table == "table_document_entries" else "id"
        cursor = await conn.execute(
            psycopg.sql.SQL("SELECT * FROM {} ORDER BY {}").format(
                psycopg.sql.Identifier(table), psycopg.sql.SQL(order)
            )
        )
        rows[table] = list(await cursor.fetchall())
    return rows
