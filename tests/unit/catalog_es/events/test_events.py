"""Every event type survives the trip to stored JSON and back."""

from __future__ import annotations

import re
import uuid

import msgspec
import pytest

from catalog_es.events import (
    EVENT_TYPES,
    CommitRebase,
    Event,
    NamespaceCreated,
    NamespaceDropped,
    NamespacePropertiesUpdated,
    ProjectCreated,
    ProjectDeleted,
    ProjectRenamed,
    SecretReference,
    ServerBootstrapped,
    TableCommitted,
    TableCreated,
    TableDropped,
    TableRegistered,
    TableRenamed,
    ViewCommitted,
    ViewCreated,
    ViewDropped,
    ViewRegistered,
    ViewRenamed,
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
    current_type,
    decode_event,
    event_data,
)

WAREHOUSE = uuid.UUID("00000000-0000-0000-0000-0000000000aa")
NAMESPACE = uuid.UUID("00000000-0000-0000-0000-0000000000bb")
TABLE = uuid.UUID("00000000-0000-0000-0000-0000000000cc")
METADATA = {
    "format-version": 2,
    "table-uuid": str(TABLE),
    "location": "file:///wh/t",
    "last-sequence-number": 0,
    "properties": {"k": "v"},
    "snapshots": [{"snapshot-id": 9_007_199_254_740_993, "timestamp-ms": 1}],
}

VIEW = uuid.UUID("00000000-0000-0000-0000-0000000000dd")
VIEW_METADATA = {"format-version": 1, "view-uuid": str(VIEW), "location": "file:///wh/v", "current-version-id": 1}

SECRET = SecretReference(uuid.UUID(int=9), "0f1e2d3c")
S3_PROFILE = {"type": "s3", "bucket": "b", "region": "eu-west-1", "key-prefix": "p"}

SAMPLES: list[Event] = [
    ServerBootstrapped(server_id=uuid.UUID(int=7), is_operator=True, user_name="ops", user_type="human"),
    ProjectCreated(project_id=uuid.UUID(int=0), name="default"),
    ProjectRenamed(project_id=uuid.UUID(int=0), name="main"),
    ProjectDeleted(project_id=uuid.UUID(int=0)),
    WarehouseCreated(
        warehouse_id=WAREHOUSE,
        project_id=uuid.UUID(int=0),
        name="lake",
        storage_profile=S3_PROFILE,
        storage_credential=SECRET,
        delete_profile={"type": "soft", "expiration-seconds": 60},
    ),
    WarehouseRenamed(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), name="lake2"),
    WarehouseDeactivated(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0)),
    WarehouseActivated(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0)),
    WarehouseStorageUpdated(
        warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), storage_profile=S3_PROFILE, storage_credential=None
    ),
    WarehouseCredentialUpdated(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), storage_credential=SECRET),
    WarehouseDeleteProfileUpdated(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), delete_profile={"type": "hard"}),
    WarehouseServerSideRebaseUpdated(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), mode="on"),
    WarehouseScanPlanningUpdated(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), mode="server"),
    WarehouseDeleted(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0)),
    WarehouseCreated(
        warehouse_id=WAREHOUSE,
        project_id=uuid.UUID(int=0),
        name="demo",
        storage_profile={"type": "file", "location": "file:///wh"},
    ),
    NamespaceCreated(namespace_id=NAMESPACE, warehouse_id=WAREHOUSE, namespace=["a", "B"], properties={"owner": "me"}),
    NamespacePropertiesUpdated(namespace_id=NAMESPACE, warehouse_id=WAREHOUSE, updated={"x": "1"}, removed=["y"]),
    NamespaceDropped(namespace_id=NAMESPACE, warehouse_id=WAREHOUSE),
    TableCreated(
        table_id=TABLE,
        warehouse_id=WAREHOUSE,
        namespace_id=NAMESPACE,
        name="Orders",
        metadata_location="file:///wh/t/metadata/00000-x.metadata.json",
        metadata=METADATA,
        updates=[{"action": "set-properties", "updates": {"k": "v"}}],
    ),
    TableRegistered(
        table_id=TABLE,
        warehouse_id=WAREHOUSE,
        namespace_id=NAMESPACE,
        name="orders",
        metadata_location="file:///wh/t/metadata/00003-x.metadata.json",
        metadata=METADATA,
    ),
    TableCommitted(
        table_id=TABLE,
        warehouse_id=WAREHOUSE,
        requirements=[{"type": "assert-table-uuid", "uuid": str(TABLE)}],
        updates=[{"action": "remove-properties", "removals": ["k"]}],
        previous_metadata_location="file:///wh/t/metadata/00000-x.metadata.json",
        metadata_location="file:///wh/t/metadata/00001-x.metadata.json",
        applied_at_ms=1_700_000_000_000,
        metadata_sha256="0" * 64,
        assigned_ids={"schema": 1},
    ),
    TableRenamed(
        table_id=TABLE,
        warehouse_id=WAREHOUSE,
        from_namespace_id=NAMESPACE,
        from_name="orders",
        namespace_id=uuid.UUID(int=5),
        name="orders_v2",
    ),
    TableDropped(table_id=TABLE, warehouse_id=WAREHOUSE, purge_requested=True),
    ViewCreated(
        view_id=VIEW,
        warehouse_id=WAREHOUSE,
        namespace_id=NAMESPACE,
        name="Daily",
        metadata_location="file:///wh/v/metadata/00000-x.metadata.json",
        metadata=VIEW_METADATA,
    ),
    ViewRegistered(
        view_id=VIEW,
        warehouse_id=WAREHOUSE,
        namespace_id=NAMESPACE,
        name="daily",
        metadata_location="file:///wh/v/metadata/00002-x.metadata.json",
        metadata=VIEW_METADATA,
    ),
    ViewCommitted(
        view_id=VIEW,
        warehouse_id=WAREHOUSE,
        requirements=[{"type": "assert-view-uuid", "uuid": str(VIEW)}],
        updates=[{"action": "set-current-view-version", "view-version-id": -1}],
        previous_metadata_location="file:///wh/v/metadata/00000-x.metadata.json",
        metadata_location="file:///wh/v/metadata/00001-x.metadata.json",
        applied_at_ms=1_700_000_000_000,
        metadata_sha256="0" * 64,
    ),
    ViewRenamed(
        view_id=VIEW,
        warehouse_id=WAREHOUSE,
        from_namespace_id=NAMESPACE,
        from_name="daily",
        namespace_id=uuid.UUID(int=5),
        name="daily_v2",
    ),
    ViewDropped(view_id=VIEW, warehouse_id=WAREHOUSE),
]


def test_samples_cover_every_event_type_when_types_are_registered():
    catalog_types = {cls for cls in EVENT_TYPES.values() if cls.__module__ == "catalog_es.events.catalog"}
    assert {type(sample) for sample in SAMPLES} == catalog_types


def test_event_types_are_keyed_by_their_versioned_type_name_when_registered():
    for type_name, cls in EVENT_TYPES.items():
        assert cls.type_name == current_type(type_name)  # a retired version is read as its current class
        assert re.fullmatch(r"io\.catalog-es\.[a-z-]+\.[a-z-]+\.v\d+", type_name)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: type(event).__name__)
def test_event_round_trips_when_stored_as_json_and_decoded(event):
    stored = msgspec.json.decode(msgspec.json.encode(event_data(event)))
    decoded = decode_event(event.type_name, stored)
    assert decoded == event
    assert type(decoded) is type(event)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: type(event).__name__)
def test_event_data_is_json_builtins_with_string_ids_when_encoded(event):
    data = event_data(event)
    assert msgspec.json.decode(msgspec.json.encode(data)) == data
    id_fields = [key for key in data if key.endswith("_id")]
    assert id_fields
    assert all(isinstance(data[key], str) for key in id_fields)


@pytest.mark.parametrize("event", SAMPLES, ids=lambda event: type(event).__name__)
def test_stream_id_names_kind_and_entity_when_event_is_built(event):
    assert event.stream_id == f"{event.stream_kind}-{event.entity_id}"


def test_table_created_defaults_updates_when_payload_has_none():
    data = event_data(next(sample for sample in SAMPLES if isinstance(sample, TableCreated)))
    del data["updates"]
    assert decode_event(TableCreated.type_name, data).updates == []


def test_decode_event_raises_when_type_is_unknown():
    with pytest.raises(ValueError, match="Unknown event type"):
        decode_event("io.catalog-es.nothing.v1", {})


def test_decode_event_raises_when_payload_misses_a_field():
    with pytest.raises(msgspec.ValidationError):
        decode_event(ProjectCreated.type_name, {"name": "x"})


def test_table_committed_records_a_rebase_only_when_the_server_rebased_it():
    plain = next(sample for sample in SAMPLES if isinstance(sample, TableCommitted))
    assert "rebased" not in event_data(plain)  # payloads of plain commits are as before
    assert decode_event(TableCommitted.type_name, event_data(plain)).rebased is None
    rebase = CommitRebase(ref="main", original_base_snapshot_id=None, new_parent_snapshot_id=7)
    data = event_data(msgspec.structs.replace(plain, rebased=rebase))
    assert data["rebased"] == {"ref": "main", "original_base_snapshot_id": None, "new_parent_snapshot_id": 7}
    assert decode_event(TableCommitted.type_name, data).rebased == rebase


def test_warehouse_rebase_mode_decodes_null_and_refuses_an_unknown_mode() -> None:
    reset = WarehouseServerSideRebaseUpdated(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), mode=None)
    assert decode_event(reset.type_name, event_data(reset)) == reset
    with pytest.raises(msgspec.ValidationError):
        decode_event(reset.type_name, {**event_data(reset), "mode": "always"})
