"""Role and user commands on PostgreSQL, where they read their stream's last event back from the log.

The fakes-based tests (tests/unit/commands/test_roles.py, test_users.py) stop where these handlers read the log
with SQL (`store.streams.last_event`): updating, deleting and re-provisioning what exists is tested here.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from catalog_es.errors import AlreadyExistsError, NoSuchRoleError, NoSuchUserError
from catalog_es.events.access import RoleDeleted, RoleUpdated, UserCreated, UserDeleted, UserUpdated
from catalog_es.store.eventstore import EventMetadata
from commands.roles import (
    CreateRole,
    DeleteRole,
    UpdateRole,
    handle_create_role,
    handle_delete_role,
    handle_update_role,
)
from commands.users import DeleteUser, ProvisionUser, handle_delete_user, handle_provision_user
from projections.catalog.projector import project_catalog
from projections.permissions.projector import project_permissions

META = EventMetadata(actor="oidc~admin")
PROJECTORS = (project_catalog, project_permissions)
PROJECT = uuid.UUID(int=0)


def test_update_and_delete_an_existing_role(open_catalog):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            ctx = catalog.ctx
            readers = await handle_create_role(CreateRole(PROJECT, "readers", None, META), ctx)
            await handle_create_role(CreateRole(PROJECT, "writers", None, META), ctx)
            head = await catalog.store.head()
            with pytest.raises(AlreadyExistsError):
                await handle_update_role(UpdateRole(readers, PROJECT, "Writers", None, META), ctx)
            await handle_update_role(UpdateRole(readers, PROJECT, "Readers", "read only", META), ctx)  # own name
            await handle_delete_role(DeleteRole(readers, META), ctx)
            with pytest.raises(NoSuchRoleError):
                await handle_update_role(UpdateRole(readers, PROJECT, "again", None, META), ctx)
            with pytest.raises(NoSuchRoleError):
                await handle_delete_role(DeleteRole(readers, META), ctx)
            return readers, [recorded.decode() for recorded in await catalog.store.read(after=head)]

    readers, events = asyncio.run(scenario())
    assert events == [
        RoleUpdated(role_id=readers, name="Readers", description="read only"),
        RoleDeleted(role_id=readers),
    ]


def test_provisioning_is_idempotent_updates_when_asked_and_deleting_is_refused_twice(open_catalog):
    def provision(update: bool = False, name: str = "Ann") -> ProvisionUser:
        return ProvisionUser("oidc~ann", name, None, "human", "config-call-creation", META, update_if_exists=update)

    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            ctx = catalog.ctx
            head = await catalog.store.head()
            outcomes = [
                await handle_provision_user(provision(), ctx),
                await handle_provision_user(provision(name="Other"), ctx),  # known: nothing recorded
                await handle_provision_user(provision(update=True, name="Ann B"), ctx),
            ]
            await handle_delete_user(DeleteUser("oidc~ann", META), ctx)
            with pytest.raises(NoSuchUserError):
                await handle_delete_user(DeleteUser("oidc~ann", META), ctx)
            outcomes.append(await handle_provision_user(provision(), ctx))  # deleted users come back new
            return outcomes, [recorded.decode() for recorded in await catalog.store.read(after=head)]

    outcomes, events = asyncio.run(scenario())
    assert outcomes == [True, False, True, True]
    created = UserCreated(user_id="oidc~ann", name="Ann", user_type="human", last_updated_with="config-call-creation")
    assert events == [
        created,
        UserUpdated(user_id="oidc~ann", name="Ann B", user_type="human", last_updated_with="update-endpoint"),
        UserDeleted(user_id="oidc~ann"),
        created,
    ]
