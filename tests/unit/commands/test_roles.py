"""Role commands without PostgreSQL (creating one under a taken name: test_handlers_in_memory.py).

Updating or deleting an existing role reads the role's last event back from the log (`store.streams.last_event`,
SQL): that path is tested against PostgreSQL (tests/integration/test_identity_streams.py); here the refusals
decided before that read.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from fakes import fake_context

from catalog_es.errors import BadRequestError, NoSuchRoleError
from catalog_es.events.access import RoleCreated
from catalog_es.store.eventstore import EventMetadata
from commands.roles import (
    CreateRole,
    DeleteRole,
    UpdateRole,
    handle_create_role,
    handle_delete_role,
    handle_update_role,
)

META = EventMetadata(actor="tester")
PROJECT = uuid.UUID(int=5)


def test_create_role_records_it_in_its_project():
    ctx, store = fake_context()
    role_id = asyncio.run(handle_create_role(CreateRole(PROJECT, "readers", "read only", META), ctx))
    assert store.appended == [RoleCreated(role_id=role_id, project_id=PROJECT, name="readers", description="read only")]


def test_roles_need_a_name():
    ctx, store = fake_context()
    with pytest.raises(BadRequestError):
        asyncio.run(handle_create_role(CreateRole(PROJECT, "  ", None, META), ctx))
    with pytest.raises(BadRequestError):
        asyncio.run(handle_update_role(UpdateRole(uuid.UUID(int=6), PROJECT, "", None, META), ctx))
    assert store.appended == []


def test_update_and_delete_refuse_a_role_that_never_existed():
    ctx, store = fake_context()
    with pytest.raises(NoSuchRoleError):
        asyncio.run(handle_update_role(UpdateRole(uuid.UUID(int=6), PROJECT, "x", None, META), ctx))
    with pytest.raises(NoSuchRoleError):
        asyncio.run(handle_delete_role(DeleteRole(uuid.UUID(int=6), META), ctx))
    assert store.appended == []
