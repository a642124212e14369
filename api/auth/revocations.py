"""Feeds a process's `RevocationList` from the log: reload when a service principal changed.

A subscriber of the process's `ChangedStreams` (one listening connection for every cache): loaded when the follower
starts, which the app waits for before serving; afterwards a look that finds a changed `service-principal-*`
stream reloads the small `authz_service_principals` projection. While the log is lost the list stops `following`,
and catalog-issued tokens are refused until it is back (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence

from api.auth.local_tokens import RevocationList
from catalog_es.events.access import ServicePrincipalEvent
from catalog_es.store.database import Connection
from projections.permissions.queries import token_floors


class RevocationFeed:
    """Reloads one `RevocationList` whenever the log says a service principal changed."""

    kinds = (ServicePrincipalEvent.stream_kind,)

    def __init__(self, revocations: RevocationList) -> None:
        self._revocations = revocations

    async def start(self, conn: Connection) -> None:
        """The floors as of now: the look read the head before, so nothing it hands on later is missed."""
        self._revocations.replace(await token_floors(conn))

    async def changed(self, conn: Connection, stream_ids: Sequence[str]) -> None:
        del stream_ids
        self._revocations.replace(await token_floors(conn))

    def lost(self) -> None:
        self._revocations.following = False
