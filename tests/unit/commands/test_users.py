"""User commands without PostgreSQL: provisioning an unknown user, deleting one that never existed.

Whether a known user exists is read from its last event in the log (`store.streams.last_event`, SQL): updating
or deleting a provisioned user is tested against PostgreSQL (tests/integration/test_identity_streams.py).
"""

from __future__ import annotations

import asyncio

import pytest
from fakes import fake_context

from catalog_es.errors import NoSuchUserError
from catalog_es.events.access import UserCreated
from catalog_es.store.eventstore import EventMetadata
from commands.users import DeleteUser, ProvisionUser, handle_delete_user, handle_provision_user

META = EventMetadata(actor="tester")


def test_provisioning_an_unknown_user_records_it_as_the_request_found_it():
    ctx, store = fake_context()
    command = ProvisionUser("oidc~ann", "Ann", "ann@example.com", "human", "config-call-creation", META)
    assert asyncio.run(handle_provision_user(command, ctx)) is True
    assert store.appended == [
        UserCreated(
            user_id="oidc~ann",
            name="Ann",
            email="ann@example.com",
            user_type="human",
            last_updated_with="config-call-creation",
        )
    ]


def test_deleting_a_user_that_never_existed_is_refused():
    ctx, store = fake_context()
    with pytest.raises(NoSuchUserError):
        asyncio.run(handle_delete_user(DeleteUser("oidc~nobody", META), ctx))
    assert store.appended == []
