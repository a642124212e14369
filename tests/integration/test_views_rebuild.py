"""Rebuild with views: replaying the log reproduces the views read model, full view metadata included."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from catalog_es.errors import NamespaceNotEmptyError, ProtectedError
from catalog_es.events import EVENT_TYPES
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.commit_view import CommitView, handle_commit_view
from commands.create_view import CreateView, handle_create_view
from commands.namespaces import CreateNamespace, DropNamespace, handle_create_namespace, handle_drop_namespace
from commands.protection import SetProtection, handle_set_protection
from commands.tabular_lifecycle import (
    DropView,
    RegisterView,
    RenameView,
    handle_drop_view,
    handle_register_view,
    handle_rename_view,
)
from projections.catalog.projector import READ_MODEL_TABLES
from projections.registry import CATALOG
from projections.verify import verify_projection

META = EventMetadata(actor="rebuilder")
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
SCHEMA_V2 = {
    "type": "struct",
    "schema-id": 1,
    "fields": [*SCHEMA["fields"], {"id": 2, "name": "day", "type": "date", "required": False}],
}


def view_version(sql: str, schema_id: int = 0, timestamp_ms: int = 1_700_000_000_000) -> dict:
    return {
        "version-id": 1,
        "schema-id": schema_id,
        "timestamp-ms": timestamp_ms,
        "summary": {"engine-name": "spark"},
        "representations": [{"type": "sql", "sql": sql, "dialect": "spark"}],
        "default-namespace": ["Sales"],
    }


async def _build_views(catalog) -> None:
    """Every view event: create, replace (new version, then a re-activated one), rename, protect, drop, register."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    sales, eu, tmp = Namespace(("Sales",)), Namespace(("Sales", "EU")), Namespace(("tmp",))
    for namespace in (sales, eu, tmp):
        await handle_create_namespace(CreateNamespace(wh, namespace, {}, META), ctx)

    daily = await handle_create_view(
        CreateView(wh, eu, "Daily", SCHEMA, view_version("SELECT id FROM t"), META, properties={"owner": "alice"}),
        ctx,
    )
    assert_uuid = [{"type": "assert-view-uuid", "uuid": daily.metadata["view-uuid"]}]
    await handle_commit_view(
        CommitView(
            wh,
            eu,
            "daily",
            assert_uuid,
            [
                {"action": "add-schema", "schema": SCHEMA_V2},
                {"action": "add-view-version", "view-version": view_version("SELECT id, day FROM t", -1, 2)},
                {"action": "set-current-view-version", "view-version-id": -1},
                {"action": "set-properties", "updates": {"comment": "with day"}},
            ],
            META,
        ),
        ctx,
    )
    # Back to version 1: logged with the server's clock, which only the recorded metadata can reproduce.
    await handle_commit_view(
        CommitView(wh, eu, "DAILY", assert_uuid, [{"action": "set-current-view-version", "view-version-id": 1}], META),
        ctx,
    )
    await handle_rename_view(RenameView(wh, eu, "daily", sales, "daily_v2", META), ctx)
    daily_id = uuid.UUID(daily.metadata["view-uuid"])
    await handle_set_protection(SetProtection("view", wh, daily_id, True, META), ctx)
    with pytest.raises(ProtectedError):
        await handle_drop_view(DropView(wh, sales, "daily_v2", META), ctx)

    await handle_create_view(CreateView(wh, tmp, "scratch", SCHEMA, view_version("SELECT 1"), META), ctx)
    with pytest.raises(NamespaceNotEmptyError):
        await handle_drop_namespace(DropNamespace(wh, tmp, META), ctx)
    await handle_drop_view(DropView(wh, tmp, "scratch", META), ctx)
    await handle_drop_namespace(DropNamespace(wh, tmp, META), ctx)

    legacy = await handle_create_view(CreateView(wh, sales, "legacy", SCHEMA, view_version("SELECT 2"), META), ctx)
    await handle_drop_view(DropView(wh, sales, "legacy", META), ctx)
    await handle_register_view(RegisterView(wh, eu, "legacy_again", legacy.metadata_location, META), ctx)


def test_rebuild_reproduces_views_read_model_when_log_has_every_view_event(open_catalog, migrated_dsn):
    async def scenario():
        async with open_catalog() as catalog:
            await _build_views(catalog)
            head = await catalog.store.head()
            async with catalog.pool.connection() as conn:
                verification = await verify_projection(conn, CATALOG)
                views = await conn.execute("SELECT * FROM views ORDER BY id")
                rebuilt = {"views": list(await views.fetchall())}  # identical to the replay, checked below
                cursor = await conn.execute("SELECT DISTINCT type FROM catalog_events")
                types = {row[0] for row in await cursor.fetchall()}
            return head, verification, types, rebuilt

    head, verification, types, rebuilt = asyncio.run(scenario())
    assert verification.position == head
    assert "views" in READ_MODEL_TABLES
    for diff in verification.diffs:
        assert (diff.only_live, diff.only_replay) == ([], []), f"rebuilt {diff.table} differs from the live read model"
    # Soft deletion's view events (catalog_es/events/lifecycle.py): tests/integration/test_soft_delete.py.
    catalog_types = {  # current versions only: a retired one is only ever read
        name
        for name, cls in EVENT_TYPES.items()
        if cls.__module__ == "catalog_es.events.catalog" and cls.type_name == name
    }
    assert {name for name in catalog_types if ".view." in name} <= types

    by_name = {row[3]: row for row in rebuilt["views"]}  # id, warehouse, namespace, name, ...
    assert set(by_name) == {"daily_v2", "legacy_again"}
    daily = by_name["daily_v2"][7]
    assert daily["current-version-id"] == 1
    assert [v["version-id"] for v in daily["versions"]] == [1, 2]
    assert [entry["version-id"] for entry in daily["version-log"]] == [1, 2, 1]
    assert daily["properties"] == {"owner": "alice", "comment": "with day"}
    assert by_name["daily_v2"][8] == 5  # created, two commits, renamed, protected (its stream moved on)
