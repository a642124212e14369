"""What every handler is given: the event store, the state port, storage, a clock and an id source."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from catalog_es.clock import Clock, IdSource, millis
from catalog_es.database import Connection
from catalog_es.errors import NoSuchNamespaceError, NoSuchWarehouseError
from catalog_es.eventstore import EventStore
from catalog_es.identifiers import Namespace
from catalog_es.state import CatalogState, NamespaceRow, WarehouseRow
from catalog_es.storage import WarehouseStorage

_T = TypeVar("_T")


@dataclass(frozen=True)
class CommandContext:
    store: EventStore
    state: CatalogState
    clock: Clock
    ids: IdSource

    def storage(self, warehouse: WarehouseRow) -> WarehouseStorage:
        """IO for one warehouse (file storage needs no configuration)."""
        del warehouse
        return WarehouseStorage()

    def now_ms(self) -> int:
        return millis(self.clock.now())

    async def existing_namespace(self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace) -> NamespaceRow:
        """Raises: NoSuchNamespaceError."""
        row = await self.state.namespace(conn, warehouse_id, namespace)
        if row is None:
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        return row

    async def warehouse(self, warehouse_id: uuid.UUID) -> WarehouseRow:
        """Raises: NoSuchWarehouseError."""
        async with self.store.connection() as conn:
            row = await self.state.warehouse_by_id(conn, warehouse_id)
        if row is None:
            raise NoSuchWarehouseError(f"Warehouse {warehouse_id} does not exist")
        return row


async def off_loop(function: Callable[..., _T], *args: object) -> _T:
    """Run blocking storage IO in a worker thread, never on the event loop."""
    return await asyncio.to_thread(function, *args)
