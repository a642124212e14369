"""User use cases: provision (on first request, on /config, or explicitly), update, delete."""

from __future__ import annotations

import msgspec

from catalog_es.errors import NoSuchUserError
from catalog_es.events.access import (
    LastUpdatedWith,
    UserCreated,
    UserDeleted,
    UserEvent,
    UserType,
    UserUpdated,
    user_stream_uuid,
)
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError
from catalog_es.store.streams import last_event
from commands.context import CommandContext


class ProvisionUser(msgspec.Struct, frozen=True):
    user_id: str
    name: str
    email: str | None
    user_type: UserType
    last_updated_with: LastUpdatedWith
    metadata: EventMetadata
    update_if_exists: bool = False


class DeleteUser(msgspec.Struct, frozen=True):
    user_id: str
    metadata: EventMetadata


def _stream(user_id: str) -> str:
    return f"user-{user_stream_uuid(user_id)}"


async def handle_provision_user(cmd: ProvisionUser, ctx: CommandContext) -> bool:
    """Create the user if unknown (or update it when asked); True when an event was recorded.

    A concurrent first request for the same user loses the version check and changes nothing.
    """
    try:
        async with ctx.store.transaction(cmd.metadata) as tx:
            version = await tx.stream_version(_stream(cmd.user_id))
            current = await last_event(tx.conn, _stream(cmd.user_id)) if version else None
            exists = current is not None and not isinstance(current, UserDeleted)
            if exists and not cmd.update_if_exists:
                return False
            event: UserEvent
            if exists:
                event = UserUpdated(
                    user_id=cmd.user_id,
                    name=cmd.name,
                    email=cmd.email,
                    user_type=cmd.user_type,
                    last_updated_with="update-endpoint",
                )
            else:
                event = UserCreated(
                    user_id=cmd.user_id,
                    name=cmd.name,
                    email=cmd.email,
                    user_type=cmd.user_type,
                    last_updated_with=cmd.last_updated_with,
                )
            await tx.append(event, expected_version=version)
    except StreamVersionConflictError:
        return False
    return True


async def handle_delete_user(cmd: DeleteUser, ctx: CommandContext) -> None:
    """Raises: NoSuchUserError."""
    async with ctx.store.transaction(cmd.metadata) as tx:
        version = await tx.stream_version(_stream(cmd.user_id))
        current = await last_event(tx.conn, _stream(cmd.user_id)) if version else None
        if current is None or isinstance(current, UserDeleted):
            raise NoSuchUserError(f"User {cmd.user_id!r} does not exist")
        await tx.append(UserDeleted(user_id=cmd.user_id), expected_version=version)
