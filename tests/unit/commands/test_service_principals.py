"""Service-principal commands without PostgreSQL: the secret hashes in `FakePrincipalSecrets` (a dict for the table).

Tokens, the OAuth endpoint, another server seeing a revocation and the database holding no secret are tested
against PostgreSQL in tests/e2e/auth/test_service_principals.py.
"""

from __future__ import annotations

import asyncio
import uuid

import msgspec
import pytest
from fakes import FakePrincipalSecrets, FakeStore, fake_context

from catalog_es.errors import NoSuchServicePrincipalError
from catalog_es.events.access import (
    PrivilegeGranted,
    ServicePrincipalCreated,
    ServicePrincipalRevoked,
    ServicePrincipalSecretRotated,
    UserCreated,
)
from catalog_es.principal_secrets import verify_secret
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.eventstore import EventMetadata
from commands import service_principals
from commands.context import CommandContext
from commands.service_principals import (
    CreateServicePrincipal,
    Credentials,
    RevokeServicePrincipal,
    RotateSecret,
    handle_create_service_principal,
    handle_revoke_service_principal,
    handle_rotate_secret,
)

META = EventMetadata(actor="tester")
UNKNOWN = uuid.UUID(int=404)


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> FakePrincipalSecrets:
    """The hashes table the handlers write on the transaction's connection, as a dict."""
    fake = FakePrincipalSecrets()
    for name in ("put_hash", "current_hash", "delete_hash"):
        monkeypatch.setattr(service_principals, name, getattr(fake, name))
    return fake


def _secret_free(store: FakeStore, *secrets: str) -> None:
    """No event holds any of `secrets` (secrets and their hashes never enter the log)."""
    for event in store.appended:
        encoded = msgspec.json.encode(event).decode()
        assert not any(secret in encoded for secret in secrets), event


def _create(ctx: CommandContext, *, server_admin: bool = False) -> Credentials:
    return asyncio.run(handle_create_service_principal(CreateServicePrincipal("etl", META, server_admin), ctx))


def test_create_records_the_user_and_the_principal_and_keeps_only_the_secrets_hash(table):
    ctx, store = fake_context()
    made = _create(ctx)
    client_id = uuid.UUID(int=101)  # the context's first new id
    user_id = f"principal~{client_id}"
    assert (made.client_id, made.user_id, made.key_version) == (client_id, user_id, 1)
    assert made.credential == f"{client_id}:{made.client_secret}"
    assert store.appended == [
        UserCreated(user_id=user_id, name="etl", user_type="application", last_updated_with="create-endpoint"),
        ServicePrincipalCreated(client_id=client_id, user_id=user_id, name="etl", key_version=1),
    ]
    [(key_version, secret_hash)] = table.hashes.values()
    assert key_version == 1
    assert verify_secret(made.client_secret, secret_hash)
    _secret_free(store, made.client_secret, secret_hash)


def test_create_as_the_server_admin_also_grants_it_admin_on_the_server(table):
    ctx, store = fake_context()
    made = _create(ctx, server_admin=True)
    assert store.appended[2:] == [
        PrivilegeGranted(
            object_kind="server", object_id=SERVER_OBJECT_ID, principal=f"user:{made.user_id}", privilege="admin"
        )
    ]
    _secret_free(store, made.client_secret, *(h for _, h in table.hashes.values()))


def test_rotate_replaces_the_hash_under_the_next_version_and_records_only_the_version(table):
    ctx, store = fake_context()
    made = _create(ctx)
    rotated = asyncio.run(handle_rotate_secret(RotateSecret(made.client_id, META), ctx))
    assert (rotated.client_id, rotated.user_id, rotated.key_version) == (made.client_id, made.user_id, 2)
    assert rotated.client_secret != made.client_secret
    assert store.appended[2:] == [ServicePrincipalSecretRotated(client_id=made.client_id, key_version=2)]
    assert store.versions[f"service-principal-{made.client_id}"] == 2
    key_version, secret_hash = table.hashes[made.client_id]
    assert key_version == 2
    assert verify_secret(rotated.client_secret, secret_hash)
    _secret_free(store, made.client_secret, rotated.client_secret, secret_hash)


def test_revoke_records_it_and_deletes_the_hash_then_a_second_revoke_or_a_rotation_is_refused(table):
    ctx, store = fake_context()
    made = _create(ctx)
    asyncio.run(handle_revoke_service_principal(RevokeServicePrincipal(made.client_id, META), ctx))
    assert store.appended[2:] == [ServicePrincipalRevoked(client_id=made.client_id)]
    assert table.hashes == {}
    with pytest.raises(NoSuchServicePrincipalError):
        asyncio.run(handle_revoke_service_principal(RevokeServicePrincipal(made.client_id, META), ctx))
    with pytest.raises(NoSuchServicePrincipalError):
        asyncio.run(handle_rotate_secret(RotateSecret(made.client_id, META), ctx))
    assert len(store.appended) == 3
    assert table.hashes == {}


def test_rotate_and_revoke_refuse_a_principal_that_never_existed(table):
    ctx, store = fake_context()
    with pytest.raises(NoSuchServicePrincipalError):
        asyncio.run(handle_rotate_secret(RotateSecret(UNKNOWN, META), ctx))
    with pytest.raises(NoSuchServicePrincipalError):
        asyncio.run(handle_revoke_service_principal(RevokeServicePrincipal(UNKNOWN, META), ctx))
    assert store.appended == []
    assert table.hashes == {}
