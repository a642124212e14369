"""Command handlers end to end on PostgreSQL and the local filesystem."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest

from catalog_es.errors import (
    AlreadyBootstrappedError,
    AlreadyExistsError,
    BadRequestError,
    CommitFailedError,
    InvalidLocationError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    UnprocessableEntityError,
)
from catalog_es.events import TableCommitted, TableCreated, TableDropped, TableRenamed
from catalog_es.identifiers import NIL_PROJECT_ID, Namespace
from catalog_es.locations import local_path
from catalog_es.metadata.table_changes import metadata_digest
from catalog_es.store.eventstore import EventMetadata
from commands.bootstrap import Bootstrap, EnsureDefaultWarehouse, handle_bootstrap, handle_ensure_default_warehouse
from commands.builtin_tasks import builtin_task_handlers
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
from commands.projects import CreateProject, DeleteProject, handle_create_project, handle_delete_project
from commands.tabular_lifecycle import DropTable, RenameTable, handle_drop_table, handle_rename_table
from commands.task_handlers import TABULAR_PURGE, QueueRegistry
from commands.task_worker import TaskWorker

META = EventMetadata(actor="alice", request_id="req-7")
SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "ts", "type": "timestamp", "required": False},
    ],
}
DB = Namespace(("db",))


def _metadata_files(table_location: str) -> list[str]:
    directory = Path(local_path(table_location)) / "metadata"
    return sorted(path.name for path in directory.glob("*.metadata.json")) if directory.exists() else []


def _only_namespace_location(dsn: str) -> str:
    with psycopg.connect(dsn) as conn:
        [(location,)] = conn.execute("SELECT properties->>'location' FROM namespaces").fetchall()
        return str(location)


async def _namespace(catalog, namespace=DB, properties=None):
    return await handle_create_namespace(
        CreateNamespace(catalog.warehouse_id, namespace, properties or {}, META), catalog.ctx
    )


async def _table(catalog, name, namespace=DB, **options):
    return await handle_create_table(
        CreateTable(catalog.warehouse_id, namespace, name, SCHEMA, META, **options), catalog.ctx
    )


async def _row(catalog, namespace, name):
    async with catalog.store.connection() as conn:
        return await catalog.ctx.state.table(conn, catalog.warehouse_id, namespace, name)


async def _namespace_row(catalog, namespace):
    async with catalog.store.connection() as conn:
        return await catalog.ctx.state.namespace(conn, catalog.warehouse_id, namespace)


def test_bootstrap_returns_same_warehouse_and_records_once_when_run_twice(open_catalog, warehouse_dir):
    async def scenario():
        async with open_catalog() as catalog:
            again = await handle_ensure_default_warehouse(
                EnsureDefaultWarehouse(warehouse_name="DEMO", location=str(warehouse_dir), metadata=META), catalog.ctx
            )
            return (
                catalog.warehouse_id,
                again,
                await catalog.ctx.warehouse(catalog.warehouse_id),
                await catalog.store.read(),
            )

    first, again, warehouse, events = asyncio.run(scenario())
    assert again == first
    assert warehouse.location == warehouse_dir.as_uri()
    assert [event.type.split(".")[2] for event in events] == ["project", "warehouse"]


def test_create_namespace_defaults_location_inside_warehouse_when_none_is_given(open_catalog, warehouse_dir):
    async def scenario():
        async with open_catalog() as catalog:
            properties = await _namespace(catalog, properties={"owner": "alice"})
            return properties, await _namespace_row(catalog, Namespace(("DB",)))

    properties, row = asyncio.run(scenario())
    assert properties == {"owner": "alice", "location": f"{warehouse_dir.as_uri()}/{row.id}"}
    assert row.properties == properties
    assert row.parts == ["db"]
    assert row.version == 1


def test_create_namespace_raises_when_it_exists_in_another_case(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            with pytest.raises(AlreadyExistsError):
                await _namespace(catalog, Namespace(("DB",)))
            return await catalog.store.head()

    assert asyncio.run(scenario()) == 3


def test_create_namespace_raises_when_parent_is_missing(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            with pytest.raises(NoSuchNamespaceError):
                await _namespace(catalog, Namespace(("a", "b")))
            await _namespace(catalog, Namespace(("a",)))
            await _namespace(catalog, Namespace(("A", "b")))
            return await _namespace_row(catalog, Namespace(("a", "B")))

    assert asyncio.run(scenario()).parts == ["A", "b"]


@pytest.mark.parametrize("parts", [(), ("",), ("a\x1fb",)])
def test_create_namespace_raises_bad_request_when_name_is_invalid(open_catalog, parts):
    async def scenario():
        async with open_catalog() as catalog:
            with pytest.raises(BadRequestError):
                await _namespace(catalog, Namespace(parts))

    asyncio.run(scenario())


def test_create_namespace_raises_when_location_is_outside_warehouse(open_catalog, tmp_path):
    async def scenario():
        async with open_catalog() as catalog:
            with pytest.raises(InvalidLocationError):
                await _namespace(catalog, properties={"location": (tmp_path / "elsewhere").as_uri()})

    asyncio.run(scenario())


def test_update_namespace_properties_reports_updated_removed_missing_when_applied(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog, properties={"a": "1", "b": "2"})
            summary = await handle_update_namespace_properties(
                UpdateNamespaceProperties(catalog.warehouse_id, DB, {"c": "3", "a": "9"}, ["b", "zz"], META),
                catalog.ctx,
            )
            return summary, await _namespace_row(catalog, DB)

    summary, row = asyncio.run(scenario())
    assert (summary.updated, summary.removed, summary.missing) == (["a", "c"], ["b"], ["zz"])
    assert {key: value for key, value in row.properties.items() if key != "location"} == {"a": "9", "c": "3"}
    assert row.version == 2


def test_update_namespace_properties_raises_when_key_is_both_set_and_removed(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            with pytest.raises(UnprocessableEntityError):
                await handle_update_namespace_properties(
                    UpdateNamespaceProperties(catalog.warehouse_id, DB, {"a": "1"}, ["a"], META), catalog.ctx
                )

    asyncio.run(scenario())


def test_create_table_writes_metadata_and_records_event_when_namespace_exists(open_catalog, migrated_dsn):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            result = await _table(
                catalog,
                "Orders",
                partition_spec={"fields": [{"source-id": 2, "transform": "day", "name": "ts_day"}]},
                properties={"owner": "alice"},
            )
            return result, await _row(catalog, DB, "orders"), await catalog.store.read()

    result, row, events = asyncio.run(scenario())
    assert result.metadata_location is not None
    assert Path(local_path(result.metadata_location)).is_file()
    assert row.name == "Orders"
    assert row.metadata_location == result.metadata_location
    assert row.metadata == result.metadata
    assert row.version == 1
    assert result.metadata["partition-specs"][0]["fields"][0]["field-id"] == 1000
    assert result.metadata["properties"]["owner"] == "alice"
    assert result.metadata["location"] == row.location
    assert row.location.startswith(_only_namespace_location(migrated_dsn) + "/")
    assert events[-1].type == TableCreated.type_name
    assert events[-1].decode().metadata == result.metadata
    assert events[-1].extensions == {"actor": "alice", "requestid": "req-7"}


def test_create_table_raises_and_records_nothing_when_name_is_taken_in_another_case(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            await _table(catalog, "orders")
            head = await catalog.store.head()
            with pytest.raises(AlreadyExistsError):
                await _table(catalog, "ORDERS")
            return head, await catalog.store.head()

    head, after = asyncio.run(scenario())
    assert after == head


def test_create_table_raises_when_namespace_is_missing(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            with pytest.raises(NoSuchNamespaceError):
                await _table(catalog, "t")

    asyncio.run(scenario())


def test_create_table_raises_when_location_overlaps_another_table(open_catalog, warehouse_dir):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            first = await _table(catalog, "a", location=(warehouse_dir / "shared").as_uri())
            with pytest.raises(InvalidLocationError):
                await _table(catalog, "b", location=(warehouse_dir / "shared" / "inner").as_uri())
            second = await _table(catalog, "c", location=(warehouse_dir / "shared2").as_uri())
            return first, second

    first, second = asyncio.run(scenario())
    assert first.metadata["location"] == (warehouse_dir / "shared").as_uri()
    assert second.metadata["location"] == (warehouse_dir / "shared2").as_uri()


def test_create_table_raises_when_location_contains_another_table(open_catalog, warehouse_dir):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            await _table(catalog, "inner", location=(warehouse_dir / "outer" / "inner").as_uri())
            with pytest.raises(InvalidLocationError):
                await _table(catalog, "outer", location=(warehouse_dir / "outer").as_uri())
            return await _table(catalog, "sibling", location=(warehouse_dir / "out").as_uri())

    sibling = asyncio.run(scenario())
    assert sibling.metadata["location"] == (warehouse_dir / "out").as_uri()


def test_create_table_raises_when_location_is_outside_warehouse(open_catalog, tmp_path):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            with pytest.raises(InvalidLocationError):
                await _table(catalog, "t", location=(tmp_path / "elsewhere").as_uri())

    asyncio.run(scenario())
    assert not (tmp_path / "elsewhere").exists()


def test_create_table_raises_and_writes_nothing_when_location_escapes_warehouse_with_dot_dot(
    open_catalog, warehouse_dir, tmp_path
):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            with pytest.raises(InvalidLocationError):
                await _table(catalog, "t", location=f"{warehouse_dir.as_uri()}/../escaped")

    asyncio.run(scenario())
    assert not (tmp_path / "escaped").exists()


def test_create_table_stages_without_writing_when_stage_create_is_set(open_catalog, warehouse_dir):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            head = await catalog.store.head()
            result = await _table(catalog, "staged", stage_create=True)
            return head, await catalog.store.head(), result, await _row(catalog, DB, "staged")

    head, after, result, row = asyncio.run(scenario())
    assert after == head
    assert result.metadata_location is None
    assert row is None
    table_dir = Path(local_path(result.metadata["location"]))
    assert not [path for path in table_dir.rglob("*") if not path.is_dir()]  # no file, no event
    assert {path.name for path in table_dir.iterdir()} == {"metadata", "data"}  # for engines that write there


def test_commit_table_writes_next_metadata_when_setting_properties(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            created = await _table(catalog, "t", properties={"keep": "1", "drop": "2"})
            committed = await handle_commit_table(
                CommitTable(
                    catalog.warehouse_id,
                    DB,
                    "T",
                    [{"type": "assert-table-uuid", "uuid": created.metadata["table-uuid"]}],
                    [
                        {"action": "set-properties", "updates": {"new": "3"}},
                        {"action": "remove-properties", "removals": ["drop"]},
                    ],
                    META,
                ),
                catalog.ctx,
            )
            return created, committed, await _row(catalog, DB, "t"), await catalog.store.read()

    created, committed, row, events = asyncio.run(scenario())
    assert committed.metadata["properties"] == {"keep": "1", "new": "3", "write.parquet.compression-codec": "zstd"}
    assert committed.metadata_location.split("/")[-1].startswith("00001-")
    assert row.metadata == committed.metadata
    assert row.metadata_location == committed.metadata_location
    assert row.version == 2
    assert [entry["metadata-file"] for entry in committed.metadata["metadata-log"]] == [created.metadata_location]
    assert _metadata_files(row.location) == sorted(
        location.split("/")[-1] for location in (created.metadata_location, committed.metadata_location)
    )
    event = events[-1].decode()
    assert isinstance(event, TableCommitted)
    assert event.previous_metadata_location == created.metadata_location
    assert event.metadata is None  # the change, not the document (issue 28)
    assert event.metadata_sha256 == metadata_digest(committed.metadata)
    assert [update["action"] for update in event.updates] == ["set-properties", "remove-properties"]


def test_commit_table_raises_and_changes_nothing_when_requirement_fails(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            created = await _table(catalog, "t")
            head = await catalog.store.head()
            with pytest.raises(CommitFailedError):
                await handle_commit_table(
                    CommitTable(
                        catalog.warehouse_id,
                        DB,
                        "t",
                        [{"type": "assert-current-schema-id", "current-schema-id": 5}],
                        [{"action": "set-properties", "updates": {"x": "1"}}],
                        META,
                    ),
                    catalog.ctx,
                )
            return created, head, await catalog.store.head(), await _row(catalog, DB, "t")

    created, head, after, row = asyncio.run(scenario())
    assert after == head
    assert row.metadata == created.metadata
    assert _metadata_files(row.location) == [created.metadata_location.split("/")[-1]]


def test_commit_table_records_nothing_when_updates_change_nothing(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            created = await _table(catalog, "t")
            head = await catalog.store.head()
            result = await handle_commit_table(CommitTable(catalog.warehouse_id, DB, "t", [], [], META), catalog.ctx)
            return created, result, head, await catalog.store.head()

    created, result, head, after = asyncio.run(scenario())
    assert after == head
    assert result.metadata_location == created.metadata_location


def test_commit_table_raises_when_table_is_missing_and_not_created(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            with pytest.raises(NoSuchTableError):
                await handle_commit_table(
                    CommitTable(
                        catalog.warehouse_id, DB, "nope", [], [{"action": "set-properties", "updates": {}}], META
                    ),
                    catalog.ctx,
                )

    asyncio.run(scenario())


def test_rename_table_moves_table_when_destination_namespace_exists(open_catalog):
    other = Namespace(("other",))

    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            await _namespace(catalog, other)
            created = await _table(catalog, "t")
            await handle_rename_table(RenameTable(catalog.warehouse_id, DB, "T", other, "Renamed", META), catalog.ctx)
            return (
                created,
                await _row(catalog, DB, "t"),
                await _row(catalog, other, "renamed"),
                await catalog.store.read(),
            )

    created, old, new, events = asyncio.run(scenario())
    assert old is None
    assert new.name == "Renamed"
    assert new.namespace == ["other"]
    assert new.metadata == created.metadata
    assert new.version == 2
    event = events[-1].decode()
    assert isinstance(event, TableRenamed)
    assert (event.from_name, event.name) == ("t", "Renamed")


def test_rename_table_raises_when_destination_name_is_taken(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            await _table(catalog, "a")
            await _table(catalog, "b")
            with pytest.raises(AlreadyExistsError):
                await handle_rename_table(RenameTable(catalog.warehouse_id, DB, "a", DB, "B", META), catalog.ctx)
            with pytest.raises(NoSuchNamespaceError):
                await handle_rename_table(
                    RenameTable(catalog.warehouse_id, DB, "a", Namespace(("x",)), "a", META), catalog.ctx
                )
            with pytest.raises(NoSuchTableError):
                await handle_rename_table(RenameTable(catalog.warehouse_id, DB, "zz", DB, "yy", META), catalog.ctx)
            return await _row(catalog, DB, "a")

    assert asyncio.run(scenario()).version == 1


def test_drop_table_removes_table_and_keeps_files_when_purge_is_not_requested(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            created = await _table(catalog, "t")
            await handle_drop_table(DropTable(catalog.warehouse_id, DB, "t", False, META), catalog.ctx)
            with pytest.raises(NoSuchTableError):
                await handle_drop_table(DropTable(catalog.warehouse_id, DB, "t", False, META), catalog.ctx)
            return created, await _row(catalog, DB, "t"), await catalog.store.read()

    created, row, events = asyncio.run(scenario())
    assert row is None
    assert Path(local_path(created.metadata_location)).is_file()
    event = events[-1].decode()
    assert isinstance(event, TableDropped)
    assert event.purge_requested is False


def test_drop_table_deletes_files_when_purge_is_requested(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog)
            created = await _table(catalog, "t")
            await handle_drop_table(DropTable(catalog.warehouse_id, DB, "t", True, META), catalog.ctx)
            kept_until_worker_ran = await asyncio.to_thread(Path(local_path(created.metadata_location)).is_file)
            registry = QueueRegistry(builtin_task_handlers()).only(TABULAR_PURGE)
            ran = await TaskWorker(catalog.ctx, registry, "test-worker").run_until_idle()
            return created, kept_until_worker_ran, ran

    created, kept_until_worker_ran, ran = asyncio.run(scenario())
    assert kept_until_worker_ran  # the drop scheduled the purge; the worker deletes
    assert ran == 1
    assert not Path(local_path(created.metadata["location"])).exists()


def test_drop_namespace_raises_when_not_empty_and_succeeds_when_empty(open_catalog):
    parent, child = Namespace(("p",)), Namespace(("p", "c"))

    async def scenario():
        async with open_catalog() as catalog:
            await _namespace(catalog, parent)
            await _namespace(catalog, child)
            await _table(catalog, "t", namespace=child)
            with pytest.raises(NamespaceNotEmptyError):
                await handle_drop_namespace(DropNamespace(catalog.warehouse_id, parent, META), catalog.ctx)
            with pytest.raises(NamespaceNotEmptyError):
                await handle_drop_namespace(DropNamespace(catalog.warehouse_id, child, META), catalog.ctx)
            await handle_drop_table(DropTable(catalog.warehouse_id, child, "t", False, META), catalog.ctx)
            await handle_drop_namespace(DropNamespace(catalog.warehouse_id, child, META), catalog.ctx)
            await handle_drop_namespace(DropNamespace(catalog.warehouse_id, Namespace(("P",)), META), catalog.ctx)
            with pytest.raises(NoSuchNamespaceError):
                await handle_drop_namespace(DropNamespace(catalog.warehouse_id, parent, META), catalog.ctx)
            return await _namespace_row(catalog, parent), await _namespace_row(catalog, child)

    assert asyncio.run(scenario()) == (None, None)


def test_bootstrap_leaves_a_deleted_default_project_deleted_when_allow_all_runs(open_catalog):
    """Under allow-all the default project stands for bootstrap; once someone deleted it, bootstrap records the
    server and does not append a second creation to the project's stream (a 500 the management fuzzer found)."""

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            ctx = catalog.ctx
            await handle_create_project(CreateProject("default", META, project_id=NIL_PROJECT_ID), ctx)
            refused = Bootstrap(accept_terms_of_use=True, metadata=META, allow_all=True)
            with pytest.raises(AlreadyBootstrappedError):
                await handle_bootstrap(refused, ctx)
            await handle_delete_project(DeleteProject(NIL_PROJECT_ID, META), ctx)
            server_id = await handle_bootstrap(refused, ctx)
            async with catalog.store.connection() as conn:
                return server_id, await ctx.state.server_id(conn), await ctx.state.project_exists(conn, NIL_PROJECT_ID)

    server_id, recorded, default_project_exists = asyncio.run(scenario())
    assert recorded == server_id
    assert not default_project_exists
