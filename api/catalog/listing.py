"""Listing the tables or views of a namespace, one page at a time."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from api.auth.listing_filter import ListingAccess
from api.catalog.paging import PageRequest
from api.catalog.wire import ListTablesResponse, TableIdentifier
from api.dependencies import parse_namespace
from catalog_es.errors import NoSuchNamespaceError
from catalog_es.identifiers import name_key
from catalog_es.state import WarehouseRow
from catalog_es.store.database import Connection
from projections.catalog.queries import CatalogReadModel

# (connection, namespace id, after key, limit) -> names
NameLister = Callable[[Connection, uuid.UUID, str, int | None], Awaitable[list[str]]]


async def list_names(
    conn: Connection,
    read_model: CatalogReadModel,
    warehouse: WarehouseRow,
    namespace: str,
    page: PageRequest,
    lister: NameLister,
    access: ListingAccess,
    relation: str,
) -> ListTablesResponse:
    """Raises: NoSuchNamespaceError."""
    ident = parse_namespace(namespace)
    row = await read_model.namespace(conn, warehouse.id, ident)
    if row is None:
        raise NoSuchNamespaceError(f"Namespace does not exist: {ident}")
    names, token = page.cut(await access.names(conn, relation, row.id, page.after, page.limit, lister), name_key)
    identifiers = [TableIdentifier(namespace=row.parts, name=name) for name in names]
    return ListTablesResponse(identifiers=identifiers, next_page_token=token)
