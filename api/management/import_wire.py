"""Bodies of the import routes (issue 32): what to import from which catalog, and how far the task got."""

from __future__ import annotations

import uuid
from typing import Annotated

import msgspec
from pyiceberg.catalog import CatalogType

from api.management.task_wire import ApiStatus
from api.management.wire import Request, Response
from api.wire_limits import Name, Text
from catalog_es.errors import BadRequestError

MAX_PROPERTIES = 64
MAX_NAMESPACES = 100
CATALOG_TYPES = frozenset(kind.value for kind in CatalogType)


class ImportCatalogRequest(Request):
    """`source`: the source's pyiceberg catalog properties (`type`, `uri`, `credential`, `warehouse` …)."""

    source: Annotated[dict[Name, Text], msgspec.Meta(max_length=MAX_PROPERTIES)]
    catalog_name: Name = "default"  # a SQL catalog keys its rows by it
    namespaces: Annotated[list[list[Name]], msgspec.Meta(max_length=MAX_NAMESPACES)] | None = None
    source_name: Name | None = None  # how events name the source [default: <type>:<uri>]

    def checked_source(self) -> dict[str, str]:
        """The properties, refused when pyiceberg would load code they name or know no such catalog type.

        Raises:
            BadRequestError: no `type` nor `uri`, an unknown `type`, or a `…-impl` property (a Python class to load).
        """
        if "type" not in self.source and "uri" not in self.source:
            raise BadRequestError("The source needs a `type` or a `uri` (pyiceberg catalog properties)")
        if "type" in self.source and self.source["type"] not in CATALOG_TYPES:
            raise BadRequestError(
                f"Unknown catalog type {self.source['type']!r}: one of {', '.join(sorted(CATALOG_TYPES))}"
            )
        named_code = sorted(key for key in self.source if key.endswith("-impl"))
        if named_code:
            raise BadRequestError(f"The server loads no class a request names: {', '.join(named_code)} refused")
        if any(not parts for parts in self.namespaces or []):
            raise BadRequestError("A namespace to import needs at least one level")
        return dict(self.source)


class ImportCatalogResponse(Response):
    task_id: uuid.UUID


class ImportStatusResponse(Response):
    """Where an import stands: the task's status, its phase (`queued`, `reading`, `importing`, `refused`, `done`,
    `failed`, `cancelled`),
    actions done of the total planned, counts per action, the locations the warehouse does not cover, errors."""

    task_id: uuid.UUID
    status: ApiStatus
    source: str
    phase: str
    attempt: int
    done: int
    total: int
    counts: dict[str, int]
    unchanged: int | None
    uncovered: list[str]
    uncovered_count: int
    errors: list[str]
