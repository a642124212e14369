"""Implicit user provisioning: the first authenticated request (or `/config`) of an unknown user records it."""

from __future__ import annotations

from api.auth.principal import Principal
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.users import ProvisionUser, handle_provision_user
from projections.permissions import queries as permissions_queries

_MAX_REMEMBERED = 100_000


class UserProvisioner:
    """Remembers users known to exist so that only a user's first request touches the database."""

    def __init__(self) -> None:
        self._known: set[str] = set()

    def forget(self, user_id: str) -> None:
        self._known.discard(user_id)

    async def ensure(self, ctx: CommandContext, principal: Principal, request_id: str | None) -> None:
        if not principal.authenticated or principal.user_id in self._known:
            return
        async with ctx.store.connection() as conn:
            exists = await permissions_queries.user(conn, principal.user_id) is not None
        if not exists:
            command = ProvisionUser(
                user_id=principal.user_id,
                name=principal.name,
                email=principal.email,
                user_type=principal.user_type,
                last_updated_with="config-call-creation",
                metadata=EventMetadata(actor=principal.user_id, request_id=request_id),
            )
            await handle_provision_user(command, ctx)
        if len(self._known) >= _MAX_REMEMBERED:
            self._known.clear()
        self._known.add(principal.user_id)
