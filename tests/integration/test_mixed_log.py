"""A log written by the release before commits recorded changes (table.committed.v1, the whole document) goes on
with table.committed.v2: every table loads as before, and rebuild, verify and as-of agree across the mixed log."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import msgspec
import psycopg
import pytest

from catalog_es.events import Json, TableCommitted, ViewCommitted
from catalog_es.events.catalog import TableEvent, ViewEvent
from catalog_es.identifiers import Namespace
from catalog_es.metadata.table_changes import MetadataDigestMismatchError, metadata_digest
from catalog_es.metadata.views import (
    commit_view,
    next_view_metadata_location,
    parse_view_metadata,
    view_metadata_to_json,
)
from catalog_es.store.eventstore import EventMetadata
from catalog_es.store.logged_documents import document_at, recorded_metadata
from commands.commit_table import CommitTable, handle_commit_table, prepare_commit
from commands.commit_view import CommitView, handle_commit_view
from commands.create_table import CreateTable, handle_create_table
from commands.create_view import CreateView, handle_create_view
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG
from projections.verify import verify_projection

META = EventMetadata(actor="upgrader")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
V1_TYPE = "io.catalog-es.table.committed.v1"
VIEW_V1_TYPE = "io.catalog-es.view.committed.v1"
VERSION = {"representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}], "default-namespace": ["db"]}


class ViewCommittedV1(ViewEvent, frozen=True, kw_only=True):
    """The view replace event as release a4d6e62 wrote it."""

    type_name = VIEW_V1_TYPE
    requirements: list[Json]
    updates: list[Json]
    previous_metadata_location: str
    metadata_location: str
    metadata: Json


class TableCommittedV1(TableEvent, frozen=True, kw_only=True):
    """The commit event as release a4d6e62 wrote it (kept here only to write such a log)."""

    type_name = V1_TYPE
    requirements: list[Json]
    updates: list[Json]
    previous_metadata_location: str
    metadata_location: str
    metadata: Json


def _write_file(location: str, document: Json) -> None:
    """The metadata file the old release wrote before appending its event."""
    path = Path(location.removeprefix("file://"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(msgspec.json.encode(document))


def _append(location: str, step: int, parent: int | None, timestamp_ms: int) -> list[Json]:
    snapshot: Json = {
        "snapshot-id": 1000 + step,
        "sequence-number": step,
        "timestamp-ms": timestamp_ms,
        "manifest-list": f"{location}/metadata/snap-{step}.avro",
        "summary": {"operation": "append", "added-records": str(step)},
        "schema-id": 0,
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    ref = {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 1000 + step}
    return [{"action": "add-snapshot", "snapshot": snapshot}, ref]


async def _commit_as_v1(catalog, name: str, updates: list[Json], now_ms: int) -> None:
    """Decide a commit as the old release did and append its v1 event (the document whole) straight to the log."""
    async with catalog.store.connection() as conn:
        current = await catalog.ctx.state.table(conn, catalog.warehouse_id, DB, name)
    prepared = prepare_commit(current, [], updates, now_ms, catalog.ctx.documents)
    await asyncio.to_thread(_write_file, prepared.metadata_location, prepared.document)
    event = TableCommittedV1(
        table_id=current.id,
        warehouse_id=current.warehouse_id,
        requirements=[],
        updates=updates,
        previous_metadata_location=current.metadata_location,
        metadata_location=prepared.metadata_location,
        metadata=prepared.document,
    )
    async with catalog.store.transaction(META, serialised=False) as tx:
        await tx.append(event, expected_version=current.version)


def _version(sql: str, version_id: int) -> Json:
    representations = [{"type": "sql", "sql": sql, "dialect": "spark"}]
    return {**VERSION, "version-id": version_id, "schema-id": 0, "timestamp-ms": 5, "representations": representations}


async def _views(catalog) -> None:
    """A view replaced once the old way (v1, the document whole), then the new way, re-activating its first version."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    await handle_create_view(CreateView(wh, DB, "v", SCHEMA, VERSION, META), ctx)
    async with catalog.store.connection() as conn:
        current = await ctx.state.view(conn, wh, DB, "v")
    updates = [
        {"action": "add-view-version", "view-version": _version("SELECT 2", 2)},
        {"action": "set-current-view-version", "view-version-id": -1},
    ]
    updated = commit_view(parse_view_metadata(current.metadata), [], updates, now_ms=70)
    event = ViewCommittedV1(
        view_id=current.id,
        warehouse_id=wh,
        requirements=[],
        updates=updates,
        previous_metadata_location=current.metadata_location,
        metadata_location=next_view_metadata_location(updated, current.metadata_location, uuid.uuid4()),
        metadata=view_metadata_to_json(updated),
    )
    await asyncio.to_thread(_write_file, event.metadata_location, event.metadata)
    async with catalog.store.transaction(META, serialised=False) as tx:
        await tx.append(event, expected_version=current.version)
    for updates in (
        [
            {"action": "add-view-version", "view-version": _version("SELECT 3", 3)},
            {"action": "set-current-view-version", "view-version-id": -1},
        ],
        [{"action": "set-current-view-version", "view-version-id": 1}],
    ):
        await handle_commit_view(CommitView(wh, DB, "v", [], updates, META), ctx)


async def _commit(catalog, name: str, updates: list[Json]) -> None:
    await handle_commit_table(CommitTable(catalog.warehouse_id, DB, name, [], updates, META), catalog.ctx)


async def _history(catalog) -> dict[str, str]:
    """Old-release commits on two tables, then new ones: snapshots, a rollback, a schema, properties, a move."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
    ids: dict[str, str] = {}
    for name, version in (("events", "2"), ("lineage", "3")):
        created = await handle_create_table(
            CreateTable(wh, DB, name, SCHEMA, META, properties={"format-version": version}), ctx
        )
        ids[name] = created.metadata["table-uuid"]
    location = f"{catalog.warehouse_dir.as_uri()}/db/events"
    async with catalog.store.connection() as conn:
        location = (await ctx.state.table(conn, wh, DB, "events")).metadata["location"]
    for step in (1, 2, 3):
        await _commit_as_v1(catalog, "events", _append(location, step, 1000 + step - 1 if step > 1 else None, step), 50)
    await _commit_as_v1(catalog, "lineage", [{"action": "set-properties", "updates": {"old": "1"}}], 60)
    for step in (4, 5):
        await _commit(catalog, "events", _append(location, step, 1000 + step - 1, 10 * step))
    rollback = [{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 1002}]
    await _commit(catalog, "events", rollback)  # stamped with the server's clock: replay must reuse it
    schema = {**SCHEMA, "schema-id": 7, "fields": [*SCHEMA["fields"], {"id": 2, "name": "n", "type": "string"}]}
    await _commit(
        catalog,
        "events",
        [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}],
    )
    await _commit(catalog, "lineage", [{"action": "set-properties", "updates": {"new": "2"}}])
    await _commit(catalog, "lineage", [{"action": "remove-properties", "removals": ["old"]}])
    await _commit(catalog, "events", [{"action": "set-location", "location": f"{location}_moved"}])
    await _commit(catalog, "events", [{"action": "set-properties", "updates": {"after-move": "yes"}}])
    await _views(catalog)
    return ids


def _snapshot_tables(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return [
            *conn.execute("SELECT id, metadata_location, metadata, version FROM tables ORDER BY id").fetchall(),
            *conn.execute("SELECT id, metadata_location, metadata, version FROM views ORDER BY id").fetchall(),
        ]


def test_a_mixed_log_rebuilds_verifies_and_serves_as_of_when_old_commits_are_followed_by_new_ones(
    open_catalog, migrated_dsn
):
    async def scenario() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        async with open_catalog() as catalog:
            await _history(catalog)
            live = _snapshot_tables(migrated_dsn)
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
                verification = await verify_projection(conn, CATALOG)
                assert all(not diff.only_live and not diff.only_replay for diff in verification.diffs)
                await rebuild_projection(conn, CATALOG)
                await _check_every_commit_as_of(conn)
            return live, _snapshot_tables(migrated_dsn)

    live, rebuilt = asyncio.run(scenario())
    assert rebuilt == live
    with psycopg.connect(migrated_dsn) as conn:
        types = [
            row[0]
            for row in conn.execute(
                "SELECT type FROM catalog_events WHERE type LIKE '%.committed.%' ORDER BY global_position"
            )
        ]
    assert types.count(V1_TYPE) == 4
    assert types[-10:-3] == [TableCommitted.type_name] * 7  # new commits append the new version
    assert types[-3:] == [VIEW_V1_TYPE, ViewCommitted.type_name, ViewCommitted.type_name]


async def _check_every_commit_as_of(conn: psycopg.AsyncConnection[Any]) -> None:
    """Each commit's document as of its position is the metadata file it wrote (v1: the one it recorded)."""
    cursor = await conn.execute(
        "SELECT global_position, type, stream_id, data FROM catalog_events WHERE type LIKE '%%.committed.%%'"
        " ORDER BY global_position"
    )
    rows = await cursor.fetchall()
    moved = 0
    for position, type_name, stream_id, data in rows:
        location, text = await document_at(conn, stream_id, position)
        document = json.loads(text)
        assert location == data["metadata_location"]
        assert await recorded_metadata(conn, stream_id, location) == document  # what purge and restore read
        if type_name in (V1_TYPE, VIEW_V1_TYPE):
            assert document == data["metadata"]
            continue
        assert metadata_digest(document) == data["metadata_sha256"]
        written = json.loads(await asyncio.to_thread(Path(location.removeprefix("file://")).read_text))
        assert document == written
        moved += "metadata" in data  # recorded whole only where the table moved
    assert moved == 1


def test_a_tampered_commit_fails_loudly_when_the_log_is_replayed(open_catalog, migrated_dsn):
    async def scenario() -> None:
        async with open_catalog() as catalog:
            await _history(catalog)
        with psycopg.connect(migrated_dsn, autocommit=True) as conn:
            conn.execute("ALTER TABLE catalog_events DISABLE TRIGGER USER")  # what an attacker with the DB could do
            conn.execute(
                "UPDATE catalog_events SET data = jsonb_set(data, '{applied_at_ms}', '1')"
                " WHERE global_position = (SELECT max(global_position) FROM catalog_events WHERE type = %s"
                " AND data->'updates'->0->>'action' = 'set-snapshot-ref')",
                (TableCommitted.type_name,),
            )
            conn.execute("ALTER TABLE catalog_events ENABLE TRIGGER USER")
        async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
            with pytest.raises(MetadataDigestMismatchError):
                await rebuild_projection(conn, CATALOG)

    asyncio.run(scenario())
