"""Protection as the commands read it: the flag of one object, what is protected inside a container (a port)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal, Protocol

import msgspec

from catalog_es.identifiers import Namespace
from catalog_es.store.database import Connection

ProtectableKind = Literal["warehouse", "namespace", "table", "view"]


class Protection(msgspec.Struct, frozen=True):
    """An object's flag and when it last changed (None: never set, so unprotected)."""

    protected: bool = False
    updated_at: datetime | None = None


class ProtectedObject(msgspec.Struct, frozen=True):
    """A protected object inside a container, named for the refusal's message (`ns.sub`, `ns.sub.t`)."""

    kind: str
    id: uuid.UUID
    name: str


class ProtectionState(Protocol):
    """Strongly consistent reads of the `protections` read model (inline), on the command's connection."""

    async def protection(self, conn: Connection, object_id: uuid.UUID) -> Protection: ...

    async def protected_inside(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace | None = None, limit: int = 10
    ) -> list[ProtectedObject]:
        """Protected namespaces, tables and views of the warehouse (None) or of a namespace's subtree (itself
        included)."""
        ...

    async def current_version(
        self, conn: Connection, kind: ProtectableKind, warehouse_id: uuid.UUID, object_id: uuid.UUID
    ) -> int | None:
        """The stream version of a live object of that kind in that warehouse; None when there is none."""
        ...
