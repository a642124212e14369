"""Maintenance policy commands without PostgreSQL: declare and remove, given objects and declared policies."""

from __future__ import annotations

import asyncio
import uuid

import msgspec
import pytest
from fakes import WAREHOUSE, FakeCatalogState, FakeMaintenanceState, fake_context

from catalog_es.errors import (
    BadRequestError,
    NoSuchNamespaceError,
    NoSuchPolicyError,
    NoSuchTableError,
    WarehouseInactiveError,
)
from catalog_es.events.maintenance import PolicyRemoved, PolicySet
from catalog_es.store.eventstore import EventMetadata
from commands.maintenance_policies import RemovePolicy, SetPolicy, handle_remove_policy, handle_set_policy

META = EventMetadata(actor="tester")
TABLE, NAMESPACE = uuid.UUID(int=20), uuid.UUID(int=10)
EXPIRY = "system.snapshot-expiry"


def _state() -> FakeMaintenanceState:
    return FakeMaintenanceState(
        objects={TABLE: ("table", WAREHOUSE.id), NAMESPACE: ("namespace", WAREHOUSE.id)},
        declared={(NAMESPACE, EXPIRY): {"enable": True}},
    )


def _set(content: bytes, kind: str = "table", object_id: uuid.UUID = TABLE, policy_type: str = EXPIRY) -> SetPolicy:
    return SetPolicy(
        object_kind=kind,  # type: ignore[arg-type]
        object_id=object_id,
        warehouse_id=WAREHOUSE.id,
        policy_type=policy_type,
        content=content,
        metadata=META,
    )


def _remove(object_id: uuid.UUID, kind: str = "namespace") -> RemovePolicy:
    return RemovePolicy(
        object_kind=kind,  # type: ignore[arg-type]
        object_id=object_id,
        warehouse_id=WAREHOUSE.id,
        policy_type=EXPIRY,
        metadata=META,
    )


def test_set_policy_records_the_content_with_its_defaults_filled_in():
    ctx, store = fake_context()
    content = asyncio.run(handle_set_policy(_set(b'{"enable": true, "min-snapshots-to-keep": 3}'), ctx, _state()))
    assert content["min-snapshots-to-keep"] == 3
    assert content["max-snapshot-age-seconds"] == 5 * 86_400
    assert store.appended == [
        PolicySet(object_kind="table", object_id=TABLE, warehouse_id=WAREHOUSE.id, policy_type=EXPIRY, content=content)
    ]


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (_set(b'{"enable": true}', policy_type="system.nope"), BadRequestError),
        (_set(b'{"enable": true, "surprise": 1}'), BadRequestError),
        (_set(b'{"enable": true, "min-snapshots-to-keep": -1}'), BadRequestError),
        (_set(b"not json"), BadRequestError),
        (_set(b'{"enable": true}', kind="namespace", object_id=TABLE), NoSuchNamespaceError),  # a table's id
        (_set(b'{"enable": true}', object_id=uuid.UUID(int=404)), NoSuchTableError),
    ],
)
def test_set_policy_refuses_bad_content_and_missing_objects_and_appends_nothing(command, error):
    ctx, store = fake_context()
    with pytest.raises(error):
        asyncio.run(handle_set_policy(command, ctx, _state()))
    assert store.appended == []


def test_policies_cannot_change_on_an_inactive_warehouse():
    inactive = FakeCatalogState(warehouses=[msgspec.structs.replace(WAREHOUSE, status="inactive")])
    ctx, store = fake_context(inactive)
    with pytest.raises(WarehouseInactiveError):
        asyncio.run(handle_set_policy(_set(b'{"enable": true}'), ctx, _state()))
    with pytest.raises(WarehouseInactiveError):
        asyncio.run(handle_remove_policy(_remove(NAMESPACE), ctx, _state()))
    assert store.appended == []


def test_remove_policy_records_the_removal_of_a_declared_policy_only():
    ctx, store = fake_context()
    with pytest.raises(NoSuchPolicyError):
        asyncio.run(handle_remove_policy(_remove(TABLE, kind="table"), ctx, _state()))  # declares none
    with pytest.raises(NoSuchNamespaceError):
        asyncio.run(handle_remove_policy(_remove(uuid.UUID(int=404)), ctx, _state()))
    assert store.appended == []
    asyncio.run(handle_remove_policy(_remove(NAMESPACE), ctx, _state()))
    assert store.appended == [
        PolicyRemoved(object_kind="namespace", object_id=NAMESPACE, warehouse_id=WAREHOUSE.id, policy_type=EXPIRY)
    ]
