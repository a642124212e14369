"""The Iceberg REST Events draft's request (both generations of its field names) and response, and the token."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import EVENT_TYPES, current_type, stored_types
from projections.audit.iceberg_operations import CUSTOM, OPERATION_TYPES, OPERATIONS

ObjectType = Literal["namespace", "table", "view"]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TOKEN_PREFIX = "cesv1:"  # noqa: S105 - a format marker, not a secret


class CatalogObjectId(msgspec.Struct, frozen=True):
    """An object by id: the draft's `{"uuid": ..., "type": ...}`, or a bare UUID string (newer draft)."""

    uuid: uuid.UUID
    type: ObjectType | None = None


class QueryEventsRequest(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True):
    """Every field optional. Unknown fields are refused: a misspelled filter must not widen the answer."""

    continuation_token: str | None = None
    page_size: int | None = None
    after_timestamp_ms: int | None = None
    since_timestamp_ms: int | None = None  # the newer draft's name of the same filter
    operation_types: list[str] | None = None
    catalog_objects_by_name: list[list[str]] | None = None
    catalog_objects_by_id: list[uuid.UUID | CatalogObjectId] | None = None
    catalog_objects_by_uuid: list[uuid.UUID | CatalogObjectId] | None = None  # the newer draft's name
    object_types: list[ObjectType] | None = None
    custom_filters: dict[str, Any] | None = None

    def since(self) -> datetime | None:
        """The first instant an event may carry: the next millisecond (timestamps are compared in milliseconds,
        as the response gives them). Raises: BadRequestError when the two names disagree or for no instant."""
        given = {value for value in (self.after_timestamp_ms, self.since_timestamp_ms) if value is not None}
        if len(given) > 1:
            raise BadRequestError("after-timestamp-ms and since-timestamp-ms name the same filter: give one")
        if not given:
            return None
        millis = given.pop()
        try:
            return _EPOCH + timedelta(milliseconds=millis + 1)
        except (OverflowError, OSError, ValueError):
            raise BadRequestError(f"Invalid timestamp (epoch milliseconds): {millis}") from None

    def event_types(self) -> list[str] | None:
        """Our stored types behind the requested operation types (`custom`: every type not catalog-shaped)."""
        if self.operation_types is None:
            return None
        unknown = sorted(set(self.operation_types) - OPERATION_TYPES)
        if unknown:
            raise BadRequestError(f"Unknown operation-types {unknown}; known: {sorted(OPERATION_TYPES)}")
        wanted = set(self.operation_types)
        types = [stored for name, kind in OPERATIONS.items() if kind in wanted for stored in stored_types(name)]
        if CUSTOM in wanted:
            types += [name for name in EVENT_TYPES if current_type(name) not in OPERATIONS]
        return types

    def object_ids(self) -> list[uuid.UUID] | None:
        both = [*(self.catalog_objects_by_id or []), *(self.catalog_objects_by_uuid or [])]
        if self.catalog_objects_by_id is None and self.catalog_objects_by_uuid is None:
            return None
        return [item if isinstance(item, uuid.UUID) else item.uuid for item in both]

    def names(self) -> list[list[str]] | None:
        if self.catalog_objects_by_name is not None and any(not parts for parts in self.catalog_objects_by_name):
            raise BadRequestError("catalog-objects-by-name: an identifier needs at least one part")
        return self.catalog_objects_by_name


class QueryEventsResponse(msgspec.Struct, frozen=True, rename="kebab"):
    continuation_token: str
    events: list[dict[str, Any]]


def encode_token(position: int) -> str:
    """Opaque to clients: the global log position after which the next page starts."""
    return base64.urlsafe_b64encode(f"{_TOKEN_PREFIX}{position}".encode()).decode().rstrip("=")


def decode_token(token: str) -> int:
    """Raises: BadRequestError for anything this server did not hand out."""
    invalid = BadRequestError("Invalid continuation-token: pass one from a previous response unchanged")
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise invalid from None
    digits = text.removeprefix(_TOKEN_PREFIX)
    if not text.startswith(_TOKEN_PREFIX) or not (digits.isascii() and digits.isdigit() and len(digits) <= 19):
        raise invalid
    if int(digits) >= 2**63:  # a position is a PostgreSQL bigint
        raise invalid
    return int(digits)
