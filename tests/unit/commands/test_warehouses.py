"""Warehouse commands without PostgreSQL, on `file` storage in a temporary directory (the access probe is real)."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from pathlib import Path

import msgspec
import pytest
from fakes import FakeCatalogState, FakeProtectionState, fake_context, namespace_row, tabular_row

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchWarehouseError, NotEmptyError, ProtectedError
from catalog_es.events import (
    NamespaceDropped,
    TableDropped,
    ViewDropped,
    WarehouseActivated,
    WarehouseCreated,
    WarehouseCredentialUpdated,
    WarehouseDeactivated,
    WarehouseDeleted,
    WarehouseDeleteProfileUpdated,
    WarehouseRenamed,
    WarehouseScanPlanningUpdated,
    WarehouseServerSideRebaseUpdated,
    WarehouseStorageUpdated,
)
from catalog_es.events.lifecycle import WarehouseSoftDeleted
from catalog_es.events.tasks import TaskScheduled
from catalog_es.state import ProjectRow, WarehouseRow
from catalog_es.storage.file_roots import FileStorageRoots
from catalog_es.store.eventstore import EventMetadata
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

META = EventMetadata(actor="tester")
PROJECT = ProjectRow(id=uuid.UUID(int=5), name="p")


def _warehouse(root: Path, name: str, number: int, **changes: object) -> WarehouseRow:
    location = f"file://{root}/{name}"
    profile = {"type": "file", "location": location}
    row = WarehouseRow(uuid.UUID(int=number), PROJECT.id, name, location, profile, version=3)
    return msgspec.structs.replace(row, **changes)


@pytest.fixture
def setup(tmp_path):
    """A project with warehouse `lake` (and an empty `other`), file storage allowed below `tmp_path`."""
    lake, other = _warehouse(tmp_path, "lake", 1), _warehouse(tmp_path, "other", 2)
    for row in (lake, other):
        Path(row.location.removeprefix("file://")).mkdir()
    catalog = FakeCatalogState(warehouses=[lake, other], projects=[PROJECT])
    ctx, store = fake_context(catalog, file_roots=FileStorageRoots(roots=(str(tmp_path),)))
    return ctx, store, lake, catalog


def _create(location: str, name: str = "new", **changes: object) -> CreateWarehouse:
    return CreateWarehouse(
        project_id=PROJECT.id,
        name=name,
        storage_profile={"type": "file", "location": location},
        metadata=META,
        **changes,  # type: ignore[arg-type]
    )


def test_create_warehouse_records_it_after_probing_its_storage(setup, tmp_path):
    ctx, store, _, _ = setup
    (tmp_path / "new").mkdir()
    delete_profile = {"type": "soft", "expiration-seconds": 60}
    warehouse_id = asyncio.run(
        handle_create_warehouse(_create(f"file://{tmp_path}/new", delete_profile=delete_profile), ctx)
    )
    [created] = store.appended
    assert isinstance(created, WarehouseCreated)
    assert (created.warehouse_id, created.project_id, created.name) == (warehouse_id, PROJECT.id, "new")
    assert created.storage_profile["location"] == f"file://{tmp_path}/new"
    assert created.storage_credential is None
    assert created.delete_profile == delete_profile


@pytest.mark.parametrize(
    ("location", "name", "error", "message"),
    [
        ("{root}/fresh", "LAKE", AlreadyExistsError, "named 'lake'"),  # the name in another case
        ("{root}/lake/inner", "inner", BadRequestError, "overlaps"),  # inside another warehouse
        ("{root}", "outer", BadRequestError, "overlaps"),  # around the others
        ("/outside-the-roots", "outside", BadRequestError, "roots|disabled|outside"),
        ("{root}/fresh", "bad/name", BadRequestError, "no '/'"),
    ],
)
def test_create_warehouse_refuses_and_appends_nothing(setup, tmp_path, location, name, error, message):
    ctx, store, _, _ = setup
    (tmp_path / "fresh").mkdir()
    with pytest.raises(error, match=message):
        asyncio.run(handle_create_warehouse(_create(location.format(root=f"file://{tmp_path}"), name), ctx))
    assert store.appended == []


def test_create_warehouse_refuses_an_unknown_project(setup, tmp_path):
    ctx, store, _, catalog = setup
    catalog.projects.clear()
    (tmp_path / "fresh").mkdir()
    with pytest.raises(Exception, match=r"Project .* does not exist"):
        asyncio.run(handle_create_warehouse(_create(f"file://{tmp_path}/fresh"), ctx))
    assert store.appended == []


def test_rename_records_a_new_name_refuses_a_taken_one_and_allows_a_change_of_case(setup):
    ctx, store, lake, _ = setup
    with pytest.raises(AlreadyExistsError):
        asyncio.run(handle_rename_warehouse(RenameWarehouse(lake.id, "Other", META), ctx))
    with pytest.raises(NoSuchWarehouseError):
        asyncio.run(handle_rename_warehouse(RenameWarehouse(uuid.UUID(int=404), "x", META), ctx))
    assert store.appended == []
    asyncio.run(handle_rename_warehouse(RenameWarehouse(lake.id, "LAKE", META), ctx))
    assert store.appended == [WarehouseRenamed(warehouse_id=lake.id, project_id=PROJECT.id, name="LAKE")]


def test_set_active_records_only_a_change_of_state(setup):
    ctx, store, lake, catalog = setup
    asyncio.run(handle_set_warehouse_active(SetWarehouseActive(lake.id, True, META), ctx))  # already active
    assert store.appended == []
    asyncio.run(handle_set_warehouse_active(SetWarehouseActive(lake.id, False, META), ctx))
    assert store.appended == [WarehouseDeactivated(warehouse_id=lake.id, project_id=PROJECT.id)]
    catalog.warehouses[0] = msgspec.structs.replace(lake, status="inactive", version=4)  # projected
    asyncio.run(handle_set_warehouse_active(SetWarehouseActive(lake.id, True, META), ctx))
    assert store.appended[1:] == [WarehouseActivated(warehouse_id=lake.id, project_id=PROJECT.id)]


def test_update_storage_keeps_the_location_and_refuses_to_move_it(setup, tmp_path):
    ctx, store, lake, _ = setup
    moved = UpdateStorage(
        warehouse_id=lake.id, storage_profile={"type": "file", "location": f"file://{tmp_path}/x"}, metadata=META
    )
    with pytest.raises(BadRequestError, match="cannot change"):
        asyncio.run(handle_update_storage(moved, ctx))
    assert store.appended == []
    layout = {"type": "file", "location": lake.location, "storage-layout": {"type": "tabular-only"}}
    asyncio.run(handle_update_storage(UpdateStorage(warehouse_id=lake.id, storage_profile=layout, metadata=META), ctx))
    [updated] = store.appended
    assert isinstance(updated, WarehouseStorageUpdated)
    assert (updated.warehouse_id, updated.storage_credential) == (lake.id, None)
    assert updated.storage_profile["location"] == lake.location
    assert updated.storage_profile["storage-layout"]["type"] == "tabular-only"


def test_update_credential_to_none_records_no_secret(setup):
    ctx, store, lake, _ = setup
    asyncio.run(handle_update_credential(UpdateCredential(warehouse_id=lake.id, metadata=META), ctx))
    assert store.appended == [
        WarehouseCredentialUpdated(warehouse_id=lake.id, project_id=PROJECT.id, storage_credential=None)
    ]
    with pytest.raises(NoSuchWarehouseError):
        asyncio.run(handle_update_credential(UpdateCredential(warehouse_id=uuid.UUID(int=404), metadata=META), ctx))


def test_update_delete_profile_records_the_canonical_profile_and_refuses_a_bad_one(setup):
    ctx, store, lake, _ = setup
    with pytest.raises(BadRequestError):
        asyncio.run(
            handle_update_delete_profile(
                UpdateDeleteProfile(lake.id, {"type": "soft", "expiration-seconds": 0}, META), ctx
            )
        )
    assert store.appended == []
    asyncio.run(
        handle_update_delete_profile(UpdateDeleteProfile(lake.id, {"type": "soft", "expiration-seconds": 5}, META), ctx)
    )
    assert store.appended == [
        WarehouseDeleteProfileUpdated(
            warehouse_id=lake.id, project_id=PROJECT.id, delete_profile={"type": "soft", "expiration-seconds": 5}
        )
    ]


def test_update_server_side_rebase_records_the_mode_even_when_unchanged(setup):
    ctx, store, lake, catalog = setup
    catalog.warehouses[0] = msgspec.structs.replace(lake, server_side_rebase="opt-in")
    asyncio.run(handle_update_server_side_rebase(UpdateServerSideRebase(lake.id, "opt-in", META), ctx))
    assert store.appended == [
        WarehouseServerSideRebaseUpdated(warehouse_id=lake.id, project_id=PROJECT.id, mode="opt-in")
    ]
    assert store.versions[f"warehouse-{lake.id}"] == 4
    with pytest.raises(NoSuchWarehouseError):
        asyncio.run(handle_update_server_side_rebase(UpdateServerSideRebase(uuid.UUID(int=404), None, META), ctx))


def test_update_scan_planning_records_the_mode_even_when_unchanged_and_none_to_defer_to_the_server(setup):
    ctx, store, lake, catalog = setup
    catalog.warehouses[0] = msgspec.structs.replace(lake, scan_planning="server")
    asyncio.run(handle_update_scan_planning(UpdateScanPlanning(lake.id, "server", META), ctx))
    catalog.warehouses[0] = msgspec.structs.replace(lake, scan_planning="server", version=4)  # projected
    asyncio.run(handle_update_scan_planning(UpdateScanPlanning(lake.id, None, META), ctx))
    assert store.appended == [
        WarehouseScanPlanningUpdated(warehouse_id=lake.id, project_id=PROJECT.id, mode="server"),
        WarehouseScanPlanningUpdated(warehouse_id=lake.id, project_id=PROJECT.id, mode=None),
    ]
    assert store.versions[f"warehouse-{lake.id}"] == 5
    with pytest.raises(NoSuchWarehouseError):
        asyncio.run(handle_update_scan_planning(UpdateScanPlanning(uuid.UUID(int=404), "client", META), ctx))
    assert len(store.appended) == 2


def _with_contents(catalog: FakeCatalogState, lake: WarehouseRow) -> tuple:
    parent = namespace_row("db", number=10, warehouse=lake)
    child = namespace_row("db", "child", number=11, warehouse=lake, version=2)
    table, view = tabular_row("table", child, "t", 20, version=5), tabular_row("view", parent, "v", 30)
    catalog.namespaces += [parent, child]
    catalog.tabulars += [table, view]
    return parent, child, table, view


def test_delete_warehouse_refuses_a_non_empty_one_unless_forced_then_drops_everything_inside(setup):
    ctx, store, lake, catalog = setup
    parent, child, table, view = _with_contents(catalog, lake)
    with pytest.raises(NotEmptyError):
        asyncio.run(handle_delete_warehouse(DeleteWarehouse(lake.id, META), ctx))
    assert store.appended == []
    asyncio.run(handle_delete_warehouse(DeleteWarehouse(lake.id, META, force=True), ctx))
    assert store.appended == [
        TableDropped(table_id=table.id, warehouse_id=lake.id, purge_requested=False),
        ViewDropped(view_id=view.id, warehouse_id=lake.id),
        NamespaceDropped(namespace_id=child.id, warehouse_id=lake.id),  # deepest first
        NamespaceDropped(namespace_id=parent.id, warehouse_id=lake.id),
        WarehouseDeleted(warehouse_id=lake.id, project_id=PROJECT.id),
    ]


def test_delete_warehouse_refuses_a_protected_one_unless_forced(setup):
    ctx, store, lake, _ = setup
    assert isinstance(ctx.protections, FakeProtectionState)
    ctx.protections.protected.add(lake.id)
    with pytest.raises(ProtectedError):
        asyncio.run(handle_delete_warehouse(DeleteWarehouse(lake.id, META), ctx))
    assert store.appended == []
    asyncio.run(handle_delete_warehouse(DeleteWarehouse(lake.id, META, force=True), ctx))
    assert store.appended == [WarehouseDeleted(warehouse_id=lake.id, project_id=PROJECT.id)]


def test_forced_delete_with_a_hold_hides_the_warehouse_and_schedules_its_expiry_dropping_nothing(setup):
    ctx, store, lake, catalog = setup
    _with_contents(catalog, lake)
    ctx = dataclasses.replace(ctx, warehouse_hold_seconds=60)
    asyncio.run(handle_delete_warehouse(DeleteWarehouse(lake.id, META, force=True), ctx))
    [scheduled, hidden] = store.appended
    assert isinstance(scheduled, TaskScheduled)
    assert (scheduled.queue, scheduled.entity_type, scheduled.entity_id) == ("tabular_expiration", "warehouse", lake.id)
    assert isinstance(hidden, WarehouseSoftDeleted)
    assert (hidden.warehouse_id, hidden.name, hidden.expiration_task_id) == (lake.id, "lake", scheduled.task_id)
    assert hidden.expires_at_ms == scheduled.due_at_ms
