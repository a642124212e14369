"""A table document's history lists as rows (`table_document_entries`): a commit writes only its change, every
reader gets the whole document, a rebuild and `audit verify` agree with the live rows, and an older database's
documents move into rows when it is migrated."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import msgspec
import psycopg
from psycopg.types.json import Jsonb

from api.runtime.database import ALL_MIGRATIONS
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from catalog_es.store.migrations import apply_migrations
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import DropTable, handle_drop_table
from commands.undrop import UndropTabulars, UndropTarget, handle_undrop_tabulars
from commands.warehouses import UpdateDeleteProfile, handle_update_delete_profile
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG
from projections.verify import verify_projection

META = EventMetadata(actor="entries")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
LISTS = ("metadata-log", "snapshot-log", "snapshots")


def _append(location: str, step: int, parent: int | None) -> list[dict[str, Any]]:
    snapshot: dict[str, Any] = {
        "snapshot-id": 1_000 + step,
        "sequence-number": step,
        "timestamp-ms": 1_700_000_000_000 + step,
        "manifest-list": f"{location}/metadata/snap-{1_000 + step}.avro",
        "summary": {"operation": "append"},
        "schema-id": 0,
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    ref = {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 1_000 + step}
    return [{"action": "add-snapshot", "snapshot": snapshot}, ref]


async def _new_table(catalog, name: str) -> uuid.UUID:
    """A new table in a new namespace `DB` of the catalog's warehouse; its id."""
    ctx, wh = catalog.ctx, catalog.warehouse_id
    await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
    created = await handle_create_table(CreateTable(wh, DB, name, SCHEMA, META), ctx)
    return uuid.UUID(created.metadata["table-uuid"])


async def _appends(catalog, name: str, steps: range, properties: dict[str, str] | None = None) -> Any:
    ctx, wh = catalog.ctx, catalog.warehouse_id
    result = None
    for step in steps:
        async with ctx.store.connection() as conn:
            row = await ctx.state.table(conn, wh, DB, name)
        assert row is not None
        updates = _append(row.metadata["location"], step, row.metadata.get("current-snapshot-id"))
        if properties and step == steps[0]:
            updates.append({"action": "set-properties", "updates": properties})
        result = await handle_commit_table(CommitTable(wh, DB, name, [], updates, META), ctx)
    return result


async def _entries(conn, table_id: uuid.UUID) -> list[tuple[str, int, str]]:
    """(list, ordinal, xmin) of the table's rows: xmin names the transaction that wrote each."""
    cursor = await conn.execute(
        "SELECT list, ordinal, xmin::text FROM table_document_entries WHERE table_id = %s ORDER BY list, ordinal",
        (table_id,),
    )
    return [(str(r[0]), int(r[1]), str(r[2])) for r in await cursor.fetchall()]


async def _head(conn, table_id: uuid.UUID) -> dict[str, Any]:
    cursor = await conn.execute("SELECT metadata FROM tables WHERE id = %s", (table_id,))
    row = await cursor.fetchone()
    return dict(row[0])


async def _served(catalog, name: str) -> dict[str, Any]:
    """The document loadTable sends (`table_document`, the JSON as stored) and the row's (`table`), checked equal."""
    async with catalog.ctx.store.connection() as conn:
        found = await catalog.ctx.state.table_document(conn, catalog.warehouse_id, DB, name)
        row = await catalog.ctx.state.table(conn, catalog.warehouse_id, DB, name)
    assert found is not None
    assert row is not None
    served = msgspec.json.decode(found[1])
    assert served == row.metadata
    return dict(served)


def test_a_commit_writes_only_the_rows_it_appends_and_the_head_keeps_no_list(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ctx = catalog.ctx
            table_id = await _new_table(catalog, "t")
            await _appends(catalog, "t", range(1, 6))
            async with ctx.store.connection() as conn:
                before = await _entries(conn, table_id)
            committed = await _appends(catalog, "t", range(6, 7))
            async with ctx.store.connection() as conn:
                after = await _entries(conn, table_id)
                head = await _head(conn, table_id)
            return before, after, head, committed.metadata, await _served(catalog, "t")

    before, after, head, committed, served = asyncio.run(scenario())
    assert set(before) <= set(after)  # no row of the earlier history was rewritten (same ordinal, same xmin)
    new = sorted(set(after) - set(before))
    assert [(entry[0], entry[1]) for entry in new] == [("metadata-log", 5), ("snapshot-log", 5), ("snapshots", 5)]
    assert len({entry[2] for entry in new}) == 1  # written by the commit's transaction
    assert all(head[key] == [] for key in LISTS)
    assert head["current-snapshot-id"] == 1_006
    assert served == committed
    assert len(served["snapshots"]) == 6
    assert len(served["metadata-log"]) == 6


def test_expiring_and_trimming_remove_only_their_rows(open_catalog):
    trimmed = {"write.metadata.previous-versions-max": "2"}

    async def scenario():
        async with open_catalog() as catalog:
            ctx = catalog.ctx
            table_id = await _new_table(catalog, "t")
            await _appends(catalog, "t", range(1, 6), trimmed)
            async with ctx.store.connection() as conn:
                before = await _entries(conn, table_id)
            updates = [{"action": "remove-snapshots", "snapshot-ids": [1_002, 1_003]}]
            committed = await handle_commit_table(CommitTable(catalog.warehouse_id, DB, "t", [], updates, META), ctx)
            async with ctx.store.connection() as conn:
                after = await _entries(conn, table_id)
                verification = await verify_projection(conn, CATALOG)
            return before, after, committed.metadata, await _served(catalog, "t"), verification

    before, after, committed, served, verification = asyncio.run(scenario())
    assert [entry[1] for entry in before if entry[0] == "metadata-log"] == [3, 4]  # trimmed from the front
    assert [entry[1] for entry in after if entry[0] == "metadata-log"] == [4, 5]
    snapshots_before = [entry for entry in before if entry[0] == "snapshots"]
    snapshots_after = [entry for entry in after if entry[0] == "snapshots"]
    assert [entry[1] for entry in snapshots_after] == [0, 3, 4]  # removed from the middle
    # The first and last rows are kept as written; the one after the removed ones is replaced (Iceberg dropped its
    # parent id, which named an expired snapshot).
    assert [snapshots_after[0], snapshots_after[2]] == [snapshots_before[0], snapshots_before[4]]
    assert snapshots_after[1][2] != snapshots_before[3][2]
    assert "parent-snapshot-id" not in served["snapshots"][1]
    assert [s["snapshot-id"] for s in served["snapshots"]] == [1_001, 1_004, 1_005]
    assert served == committed
    assert verification.identical, [d for d in verification.diffs if d.only_live or d.only_replay]


def test_a_rebuild_and_a_soft_drop_keep_every_document_whole(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_update_delete_profile(
                UpdateDeleteProfile(wh, {"type": "soft", "expiration-seconds": 600}, META), ctx
            )
            await handle_create_namespace(CreateNamespace(wh, DB, {}, META), ctx)
            for name in ("a", "b"):
                await handle_create_table(CreateTable(wh, DB, name, SCHEMA, META), ctx)
                await _appends(catalog, name, range(1, 8), {"write.metadata.previous-versions-max": "3"})
            updates = [{"action": "remove-snapshots", "snapshot-ids": [1_001]}]
            await handle_commit_table(CommitTable(wh, DB, "a", [], updates, META), ctx)
            live = {name: await _served(catalog, name) for name in ("a", "b")}
            dropped = await handle_drop_table(DropTable(wh, DB, "b", None, META), ctx)
            async with ctx.store.connection() as conn:
                deleted = await ctx.deleted().deleted_tabular(conn, wh, uuid.UUID(live["b"]["table-uuid"]))
                verified = await verify_projection(conn, CATALOG)
                await rebuild_projection(conn, CATALOG, batch=4)
            rebuilt_a = await _served(catalog, "a")
            target = UndropTarget("table", uuid.UUID(live["b"]["table-uuid"]))
            await handle_undrop_tabulars(UndropTabulars(wh, [target], META), ctx)
            return live, dropped, deleted, verified, rebuilt_a, await _served(catalog, "b")

    live, _, deleted, verified, rebuilt_a, undropped_b = asyncio.run(scenario())
    assert deleted is not None
    assert deleted.metadata == live["b"]
    assert verified.identical, [d for d in verified.diffs if d.only_live or d.only_replay]
    assert rebuilt_a == live["a"]
    assert undropped_b == live["b"]


def _document(table_id: uuid.UUID, snapshots: int) -> dict[str, Any]:
    location = f"file:///w/{table_id}"
    return {
        "format-version": 2,
        "table-uuid": str(table_id),
        "location": location,
        "last-updated-ms": 1_700_000_000_000,
        "properties": {},
        "snapshots": [
            {"snapshot-id": i, "timestamp-ms": i, "manifest-list": f"{location}/{i}"} for i in range(snapshots)
        ],
        "snapshot-log": [{"snapshot-id": i, "timestamp-ms": i} for i in range(snapshots)],
        "metadata-log": [{"metadata-file": f"{location}/metadata/{i}.json", "timestamp-ms": i} for i in range(2)],
        "current-snapshot-id": snapshots - 1,
    }


def test_a_database_of_the_previous_release_moves_its_documents_into_rows(migrated_dsn):
    """The step `0107_table_document_entries` on a database whose `tables` (and soft-dropped tables) hold whole
    documents: readers get the same documents, the heads keep no list."""
    previous = [m for m in ALL_MIGRATIONS if m.name != "0107_table_document_entries"]
    live, dropped, empty = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    documents = {live: _document(live, 3), dropped: _document(dropped, 2), empty: _document(empty, 0)}

    async def scenario():
        async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
            await conn.execute("DROP SCHEMA public CASCADE")
            await conn.execute("CREATE SCHEMA public")
            await apply_migrations(conn, previous)
            namespace = uuid.uuid4()
            for table_id in (live, empty):
                await conn.execute(
                    "INSERT INTO tables (id, warehouse_id, namespace_id, name, name_key, location, metadata_location,"
                    " metadata, version) VALUES (%s, %s, %s, %s, %s, '', 'm', %s, 1)",
                    (table_id, uuid.uuid4(), namespace, str(table_id), str(table_id), Jsonb(documents[table_id])),
                )
            await conn.execute(
                "INSERT INTO deleted_tabulars (id, kind, warehouse_id, namespace_id, name, name_key, location,"
                " metadata_location, metadata, version, deleted_at, expires_at, purge_requested)"
                " VALUES (%s, 'table', %s, %s, 'd', 'd', '', 'm', %s, 1, now(), now(), false)",
                (dropped, uuid.uuid4(), namespace, Jsonb(documents[dropped])),
            )
            applied = await apply_migrations(conn, ALL_MIGRATIONS)
            cursor = await conn.execute(
                "SELECT id, metadata, tabular_document(metadata, id), tabular_document_text(metadata, id) FROM tables"
                " UNION ALL SELECT id, metadata, tabular_document(metadata, id, true),"
                " tabular_document_text(metadata, id, true) FROM deleted_tabulars"
            )
            rows = await cursor.fetchall()
            printed = {}  # what loadTable sent before: the whole document's jsonb printed as text
            for table_id, document in documents.items():
                cursor = await conn.execute("SELECT %s::jsonb::text", (Jsonb(document),))
                printed[table_id] = (await cursor.fetchone())[0]
            return applied, rows, printed

    applied, rows, printed = asyncio.run(scenario())
    assert applied == ["0107_table_document_entries"]
    assert {row[0]: row[2] for row in rows} == documents
    assert {row[0]: row[3] for row in rows} == printed  # byte for byte
    assert all(row[1][key] == [] for row in rows for key in LISTS)
