"""The wire shapes of soft deletion: Lakekeeper's deleted-tabulars listing and undrop, and our restore."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

import msgspec


class DeletedTabularResponse(msgspec.Struct, rename="kebab", omit_defaults=True):
    """Lakekeeper's item, plus who dropped it and whether its files are purged when it expires."""

    id: uuid.UUID
    name: str
    namespace: list[str]
    typ: Literal["table", "view"]
    warehouse_id: uuid.UUID
    deleted_at: datetime
    expiration_date: datetime
    deleted_by: str | None
    purge_requested: bool
    namespace_id: uuid.UUID
    created_at: datetime | None = None
    dropped_with_namespace: uuid.UUID | None = None


class ListDeletedTabularsResponse(msgspec.Struct, rename="kebab"):
    tabulars: list[DeletedTabularResponse]
    next_page_token: str | None = None


class UndropTarget(msgspec.Struct, forbid_unknown_fields=True):
    """`{"type": "table"|"view"|"namespace", "id": …, "name": …}`: `name` (ours) brings a table or view back
    under a new name, for when its old one was taken meanwhile; a namespace comes back with its whole tree."""

    type: Literal["table", "view", "namespace"]
    id: uuid.UUID
    name: str | None = None


class UndropTabularsRequest(msgspec.Struct, forbid_unknown_fields=True):
    targets: list[UndropTarget]


class UndroppedItem(msgspec.Struct, rename="kebab"):
    type: str
    id: uuid.UUID
    namespace: list[str]
    name: str


class UndropTabularsResponse(msgspec.Struct, rename="kebab"):
    undropped: list[UndroppedItem]


class RestoreTableRequest(msgspec.Struct, rename="kebab", forbid_unknown_fields=True):
    metadata_location: str


class RestoreTableResponse(msgspec.Struct, rename="kebab"):
    metadata_location: str


class UndeleteWarehouseRequest(msgspec.Struct, rename="kebab", forbid_unknown_fields=True):
    name: str | None = None


class UndeleteWarehouseResponse(msgspec.Struct, rename="kebab"):
    warehouse_id: uuid.UUID
    name: str
