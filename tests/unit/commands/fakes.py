"""In-memory ports for command handler tests: given rows -> when a command -> then the events it appended.

`FakeStore.transaction` records what a handler appends and keeps it only when the block ends without an
error, as the real event store's transaction does; the states answer from plain dictionaries.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec

from catalog_es.clock import SystemClock
from catalog_es.errors import CommitFailedError
from catalog_es.events import Event
from catalog_es.identifiers import Namespace, name_key
from catalog_es.protection import ProtectedObject, Protection
from catalog_es.state import NamespaceRow, TabularHead, TabularRow, WarehouseRow
from commands.context import CommandContext

WAREHOUSE = WarehouseRow(
    id=uuid.UUID(int=1), project_id=uuid.UUID(int=0), name="wh", location="file:///wh", storage_profile={}
)


class FakeTransaction:
    def __init__(self, store: FakeStore) -> None:
        self.conn: Any = None
        self.pending: list[tuple[Event, int]] = []
        self._store = store

    async def stream_version(self, stream_id: str) -> int:
        return self._store.versions.get(stream_id, 0)

    async def append(self, event: Event, *, expected_version: int) -> None:
        pending = sum(1 for e, _ in self.pending if e.stream_id == event.stream_id)
        if self._store.versions.get(event.stream_id, 0) + pending != expected_version:
            raise CommitFailedError(f"{event.stream_id} is not at version {expected_version}")
        self.pending.append((event, expected_version))


@dataclass
class FakeStore:
    """An event store with no database: `appended` holds the committed events, in order."""

    appended: list[Event] = field(default_factory=list)
    versions: dict[str, int] = field(default_factory=dict)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        yield None

    @asynccontextmanager
    async def transaction(self, metadata: Any, *, serialised: bool = True) -> AsyncIterator[FakeTransaction]:
        del metadata, serialised
        tx = FakeTransaction(self)
        yield tx
        for event, _ in tx.pending:
            self.appended.append(event)
            self.versions[event.stream_id] = self.versions.get(event.stream_id, 0) + 1


@dataclass
class FakeCatalogState:
    """The catalog read model as lists of rows (only what the tabular and namespace handlers ask)."""

    namespaces: list[NamespaceRow] = field(default_factory=list)
    tabulars: list[TabularRow] = field(default_factory=list)

    async def warehouse_by_id(self, conn: Any, warehouse_id: uuid.UUID) -> WarehouseRow | None:
        return WAREHOUSE if warehouse_id == WAREHOUSE.id else None

    async def namespace(self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace) -> NamespaceRow | None:
        return next((n for n in self.namespaces if n.namespace.key == namespace.key), None)

    def _find(self, kind: str, namespace: Namespace, name: str) -> TabularRow | None:
        return next(
            (
                t
                for t in self.tabulars
                if t.kind == kind
                and Namespace(tuple(t.namespace)).key == namespace.key
                and name_key(t.name) == name_key(name)
            ),
            None,
        )

    async def table(self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace, name: str) -> TabularRow | None:
        return self._find("table", namespace, name)

    async def table_head(
        self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularHead | None:
        row = self._find("table", namespace, name)
        if row is None:
            return None
        fields = msgspec.structs.asdict(row)
        del fields["metadata"]
        return TabularHead(**fields)

    async def view(self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace, name: str) -> TabularRow | None:
        return self._find("view", namespace, name)

    async def table_name_taken(self, conn: Any, namespace_id: uuid.UUID, name: str) -> bool:
        return any(t.namespace_id == namespace_id and name_key(t.name) == name_key(name) for t in self.tabulars)

    async def view_id_taken(self, conn: Any, view_id: uuid.UUID) -> bool:
        return any(t.kind == "view" and t.id == view_id for t in self.tabulars)


@dataclass
class FakeProtectionState:
    """The protections read model: the protected ids (names for the messages are the ids)."""

    protected: set[uuid.UUID] = field(default_factory=set)

    async def protection(self, conn: Any, object_id: uuid.UUID) -> Protection:
        return Protection(protected=object_id in self.protected)

    async def protected_inside(
        self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace | None = None, limit: int = 10
    ) -> list[ProtectedObject]:
        return [ProtectedObject("object", object_id, str(object_id)) for object_id in sorted(self.protected)][:limit]

    async def current_version(self, conn: Any, kind: str, warehouse_id: uuid.UUID, object_id: uuid.UUID) -> int | None:
        return None


@dataclass
class FakeAccessState:
    """The permissions read model: direct assignments per object and roles by (project, name key)."""

    granted: dict[uuid.UUID, list[tuple[str, str]]] = field(default_factory=dict)
    roles: dict[tuple[uuid.UUID, str], uuid.UUID] = field(default_factory=dict)

    async def role_by_name(self, conn: Any, project_id: uuid.UUID, name: str) -> uuid.UUID | None:
        return self.roles.get((project_id, name_key(name)))

    async def assignments(self, conn: Any, object_id: uuid.UUID) -> list[tuple[str, str]]:
        return list(self.granted.get(object_id, []))

    async def user_exists(self, conn: Any, user_id: str) -> bool:
        return True

    async def object_kind(self, conn: Any, object_id: uuid.UUID) -> str | None:
        return None


def fake_context(
    state: FakeCatalogState | None = None, access: FakeAccessState | None = None
) -> tuple[CommandContext, FakeStore]:
    """A command context over the fakes (stream versions as the rows say), and the store to assert on."""
    state = state or FakeCatalogState()
    store = FakeStore(versions={f"{row.kind}-{row.id}": row.version for row in state.tabulars})
    clock = SystemClock()
    ctx = CommandContext(
        store=store,  # type: ignore[arg-type]
        state=state,  # type: ignore[arg-type]
        clock=clock,
        ids=_Ids(),
        access=access or FakeAccessState(),
        protections=FakeProtectionState(),
    )
    return ctx, store


class _Ids:
    def __init__(self) -> None:
        self._next = 100

    def new_id(self) -> uuid.UUID:
        self._next += 1
        return uuid.UUID(int=self._next)
