"""The authorizer: `allowall` lets everything through; `builtin` checks the permissions read model.

Objects the caller may not see answer exactly as missing ones do (no existence leak); visible objects
without the needed privilege answer 403.
"""

from __future__ import annotations

import uuid

from api.auth.principal import Principal
from catalog_es.errors import CatalogError, NotAuthorizedError
from catalog_es.store.database import Connection
from projections.permissions import queries as permissions_queries


class Authorizer:
    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled

    async def allowed(self, conn: Connection, principal: Principal, object_id: uuid.UUID, privilege: str) -> bool:
        if not self.enabled:
            return True
        return await permissions_queries.has_privilege(conn, principal.user_id, object_id, privilege, principal.roles)

    async def visible(self, conn: Connection, principal: Principal, object_id: uuid.UUID) -> bool:
        if not self.enabled:
            return True
        return await permissions_queries.can_see(conn, principal.user_id, object_id, principal.roles)

    async def require_visible(
        self, conn: Connection, principal: Principal, object_id: uuid.UUID, not_found: CatalogError
    ) -> None:
        """Raises: `not_found` when the caller may not see the object."""
        if not await self.visible(conn, principal, object_id):
            raise not_found

    async def require(
        self, conn: Connection, principal: Principal, object_id: uuid.UUID, privilege: str, not_found: CatalogError
    ) -> None:
        """Raises: NotAuthorizedError (visible, not allowed) or `not_found` (not visible)."""
        if await self.allowed(conn, principal, object_id, privilege):
            return
        await self.require_visible(conn, principal, object_id, not_found)
        raise NotAuthorizedError(f"Not allowed: {privilege} on this object is required")

    async def sees_everything_in(self, conn: Connection, principal: Principal, container_id: uuid.UUID) -> bool:
        """Whether listings inside the container need no per-item filter."""
        return await self.allowed(conn, principal, container_id, "describe")
