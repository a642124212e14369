"""Service-principal use cases: create (a user and its client credentials), rotate the secret, revoke.

The secret is generated here, returned once to the caller and otherwise only hashed into the secrets table
in the same transaction as the event; the event carries the secret's version, never the secret or its hash.
"""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import NoSuchServicePrincipalError
from catalog_es.events.access import (
    ServicePrincipalCreated,
    ServicePrincipalRevoked,
    ServicePrincipalSecretRotated,
    UserCreated,
    user_stream_uuid,
)
from catalog_es.principal_secrets import hash_secret, new_secret
from catalog_es.store.eventstore import EventMetadata, Transaction
from catalog_es.store.principal_secrets import current_hash, delete_hash, put_hash
from commands.context import CommandContext
from commands.permissions import server_admin_assigned_event

USER_PREFIX = "principal~"
"""A service principal acts as the user `principal~<client id>` (OpenID users are `oidc~<subject>`)."""


def principal_user_id(client_id: uuid.UUID) -> str:
    return f"{USER_PREFIX}{client_id}"


class Credentials(msgspec.Struct, frozen=True):
    """What the creator (or rotator) is shown once: the secret exists nowhere else."""

    client_id: uuid.UUID
    client_secret: str
    user_id: str
    key_version: int

    @property
    def credential(self) -> str:
        """The `credential=<client id>:<client secret>` pyiceberg and Iceberg's Java client take."""
        return f"{self.client_id}:{self.client_secret}"


class CreateServicePrincipal(msgspec.Struct, frozen=True):
    name: str
    metadata: EventMetadata
    server_admin: bool = False  # also make it the server's admin (the first principal of `serve --secure`)


class RotateSecret(msgspec.Struct, frozen=True):
    client_id: uuid.UUID
    metadata: EventMetadata


class RevokeServicePrincipal(msgspec.Struct, frozen=True):
    client_id: uuid.UUID
    metadata: EventMetadata


def _stream(client_id: uuid.UUID) -> str:
    return f"{ServicePrincipalCreated.stream_kind}-{client_id}"


async def handle_create_service_principal(cmd: CreateServicePrincipal, ctx: CommandContext) -> Credentials:
    client_id = ctx.ids.new_id()
    user_id = principal_user_id(client_id)
    secret = new_secret()
    secret_hash = hash_secret(secret)  # slow on purpose: before the transaction opens
    async with ctx.store.transaction(cmd.metadata) as tx:
        user = UserCreated(user_id=user_id, name=cmd.name, user_type="application", last_updated_with="create-endpoint")
        await tx.append(user, expected_version=await tx.stream_version(f"user-{user_stream_uuid(user_id)}"))
        created = ServicePrincipalCreated(client_id=client_id, user_id=user_id, name=cmd.name, key_version=1)
        await tx.append(created, expected_version=0)
        if cmd.server_admin:
            grant = server_admin_assigned_event(user_id)
            await tx.append(grant, expected_version=await tx.stream_version(grant.stream_id))
        await put_hash(tx.conn, client_id, 1, secret_hash)
    return Credentials(client_id=client_id, client_secret=secret, user_id=user_id, key_version=1)


async def _live_version(tx: Transaction, client_id: uuid.UUID) -> tuple[int, int]:
    """(stream version, secret version) of a principal that is not revoked. Raises: NoSuchServicePrincipalError."""
    stream_version = await tx.stream_version(_stream(client_id))
    held = await current_hash(tx.conn, client_id) if stream_version else None
    if held is None:
        raise NoSuchServicePrincipalError(f"Service principal {client_id} does not exist")
    return stream_version, held[0]


async def handle_rotate_secret(cmd: RotateSecret, ctx: CommandContext) -> Credentials:
    """A new secret; the old one, and tokens issued under it, stop working. Raises: NoSuchServicePrincipalError."""
    secret = new_secret()
    secret_hash = hash_secret(secret)
    async with ctx.store.transaction(cmd.metadata) as tx:
        stream_version, key_version = await _live_version(tx, cmd.client_id)
        rotated = ServicePrincipalSecretRotated(client_id=cmd.client_id, key_version=key_version + 1)
        await tx.append(rotated, expected_version=stream_version)
        await put_hash(tx.conn, cmd.client_id, rotated.key_version, secret_hash)
    return Credentials(
        client_id=cmd.client_id,
        client_secret=secret,
        user_id=principal_user_id(cmd.client_id),
        key_version=rotated.key_version,
    )


async def handle_revoke_service_principal(cmd: RevokeServicePrincipal, ctx: CommandContext) -> None:
    """No more tokens; the hash is deleted. Its user and grants stay (delete the user to drop them).

    Raises: NoSuchServicePrincipalError (unknown, or revoked already).
    """
    async with ctx.store.transaction(cmd.metadata) as tx:
        stream_version, _ = await _live_version(tx, cmd.client_id)
        await tx.append(ServicePrincipalRevoked(client_id=cmd.client_id), expected_version=stream_version)
        await delete_hash(tx.conn, cmd.client_id)
