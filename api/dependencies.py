"""Request-scoped dependencies: the command context, a read connection, the warehouse, who is asking."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import unquote

from litestar import Request
from litestar.datastructures import State
from litestar.di import Provide

from api.encoded_slash import decode_name
from catalog_es.database import Connection
from catalog_es.errors import BadRequestError, NoSuchWarehouseError
from catalog_es.eventstore import EventMetadata
from catalog_es.identifiers import Namespace
from catalog_es.state import WarehouseRow
from commands.context import CommandContext
from projections.catalog_queries import CatalogReadModel


def provide_ctx(state: State) -> CommandContext:
    ctx: CommandContext = state.ctx
    return ctx


def provide_read_model(state: State) -> CatalogReadModel:
    read_model: CatalogReadModel = state.read_model
    return read_model


async def provide_conn(state: State) -> AsyncGenerator[Connection, None]:
    async with state.ctx.store.connection() as conn:
        yield conn


async def provide_warehouse(prefix: str, conn: Connection, read_model: CatalogReadModel) -> WarehouseRow:
    """The warehouse named by the `{prefix}` path segment (its id, as /config advertises)."""
    try:
        warehouse_id = uuid.UUID(prefix)
    except ValueError:
        raise NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist") from None
    warehouse = await read_model.warehouse_by_id(conn, warehouse_id)
    if warehouse is None:
        raise NoSuchWarehouseError(f"Warehouse {prefix!r} does not exist")
    return warehouse


def provide_event_metadata(request: Request[Any, Any, Any]) -> EventMetadata:
    return EventMetadata(actor="anonymous", request_id=request.scope.get("state", {}).get("request_id"))


def parse_namespace(namespace: str) -> Namespace:
    """Raises: BadRequestError for an empty namespace segment."""
    if not namespace:
        raise BadRequestError("Namespace must not be empty")
    return Namespace(tuple(decode_name(part) for part in Namespace.from_path(namespace).parts))


def parse_parent(parent: str) -> Namespace:
    """The `parent` query parameter: the path encoding (parts percent-encoded, joined by 0x1F) as a value.

    Clients encode the separator either raw or as `%1F` once more; both are accepted.
    """
    parts = re.split("\x1f|%1[fF]", parent)
    return Namespace(tuple(unquote(part) for part in parts))


DEPENDENCIES = {
    "ctx": Provide(provide_ctx, sync_to_thread=False),
    "read_model": Provide(provide_read_model, sync_to_thread=False),
    "conn": Provide(provide_conn),
    "warehouse_row": Provide(provide_warehouse),
    "meta": Provide(provide_event_metadata, sync_to_thread=False),
}
