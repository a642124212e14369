"""Access-filtered listings: unfiltered when the caller may describe the whole container, else one joined query."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from api.auth.authorizer import Authorizer
from api.auth.principal import Principal
from catalog_es.identifiers import Namespace
from catalog_es.store.database import Connection
from projections.catalog.queries import CatalogReadModel
from projections.permissions import queries as permissions_queries
from projections.search import SearchHit, search_tabulars

# (connection, namespace id, after key, limit) -> names
NameLister = Callable[[Connection, uuid.UUID, str, int | None], Awaitable[list[str]]]


class ListingAccess:
    """What one caller may list; with the allowall authorizer everything."""

    def __init__(self, authz: Authorizer, principal: Principal) -> None:
        self.authz, self.principal = authz, principal

    async def sees(self, conn: Connection, object_id: uuid.UUID) -> bool:
        """Whether one listed object is the caller's to see (a project's roles)."""
        return await self.authz.visible(conn, self.principal, object_id)

    async def namespaces(
        self,
        conn: Connection,
        read_model: CatalogReadModel,
        warehouse_id: uuid.UUID,
        parent: Namespace | None,
        container_id: uuid.UUID,
        after: str,
        limit: int | None,
    ) -> list[list[str]]:
        if await self.authz.sees_everything_in(conn, self.principal, container_id):
            return await read_model.list_namespaces(conn, warehouse_id, parent, after, limit)
        return await permissions_queries.visible_child_namespaces(
            conn, self.principal.user_id, warehouse_id, parent, after, limit, self.principal.roles
        )

    async def names(
        self,
        conn: Connection,
        relation: str,
        namespace_id: uuid.UUID,
        after: str,
        limit: int | None,
        lister: NameLister,
    ) -> list[str]:
        """Tables (`relation="tables"`) or views of a namespace."""
        if await self.authz.sees_everything_in(conn, self.principal, namespace_id):
            return await lister(conn, namespace_id, after, limit)
        return await permissions_queries.visible_tabular_names(
            conn, self.principal.user_id, relation, namespace_id, after, limit, self.principal.roles
        )

    async def search(
        self, conn: Connection, warehouse_id: uuid.UUID, text: str, limit: int, tabular_id: uuid.UUID | None = None
    ) -> list[SearchHit]:
        """Tables and views of the warehouse named like `text` (or with that id); filtered unless the caller
        sees the warehouse."""
        if await self.authz.sees_everything_in(conn, self.principal, warehouse_id):
            return await search_tabulars(conn, warehouse_id, text, limit, tabular_id=tabular_id)
        principals = await permissions_queries.user_principals(conn, self.principal.user_id, self.principal.roles)
        return await search_tabulars(conn, warehouse_id, text, limit, visible_to=principals, tabular_id=tabular_id)
