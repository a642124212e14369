"""Managed access without PostgreSQL (assignment changes: test_handlers_in_memory.py)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import fake_context

from catalog_es.errors import BadRequestError
from catalog_es.events.access import ManagedAccessSet, PrivilegeGranted
from catalog_es.store.eventstore import EventMetadata
from commands.permissions import (
    ChangeAssignments,
    SetManagedAccess,
    handle_change_assignments,
    handle_set_managed_access,
)

META = EventMetadata(actor="tester")
NAMESPACE = uuid.UUID(int=10)


def test_set_managed_access_records_the_flag_on_the_objects_acl_stream_after_its_grants():
    ctx, store = fake_context()
    grant = ChangeAssignments("namespace", NAMESPACE, [("user:bob", "select")], [], META)
    asyncio.run(handle_change_assignments(grant, ctx))
    asyncio.run(handle_set_managed_access(SetManagedAccess("namespace", NAMESPACE, True, META), ctx))
    asyncio.run(handle_set_managed_access(SetManagedAccess("namespace", NAMESPACE, False, META), ctx))
    assert store.appended == [
        PrivilegeGranted(object_kind="namespace", object_id=NAMESPACE, principal="user:bob", privilege="select"),
        ManagedAccessSet(object_kind="namespace", object_id=NAMESPACE, enabled=True),
        ManagedAccessSet(object_kind="namespace", object_id=NAMESPACE, enabled=False),
    ]
    assert store.versions[f"acl-{NAMESPACE}"] == 3


@pytest.mark.parametrize("kind", ["table", "view", "project", "role", "server"])
def test_set_managed_access_is_refused_on_anything_but_warehouses_and_namespaces(kind):
    ctx, store = fake_context()
    with pytest.raises(BadRequestError):
        asyncio.run(handle_set_managed_access(SetManagedAccess(kind, NAMESPACE, True, META), ctx))  # type: ignore[arg-type]
    assert store.appended == []


@pytest.mark.parametrize(
    ("writes", "message"),
    [
        ([("user:bob", "fly")], "not a privilege"),
        ([("group:ops", "select")], "name a user or a role"),
        ([("user:", "select")], "name a user or a role"),
    ],
)
def test_change_assignments_refuses_unknown_privileges_and_principals(writes, message):
    ctx, store = fake_context()
    with pytest.raises(BadRequestError, match=message):
        asyncio.run(handle_change_assignments(ChangeAssignments("table", NAMESPACE, writes, [], META), ctx))
    assert store.appended == []
