"""Lakekeeper's `POST /management/v1/warehouse/{id}/search-tabular`, over the `tabular_search` projection."""

from __future__ import annotations

import uuid
from typing import Literal

import msgspec
from litestar import post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.rules import on_warehouse
from catalog_es.errors import BadRequestError
from catalog_es.identifiers import name_key
from catalog_es.store.database import Connection
from projections.search import SearchHit

MAX_SEARCH = 64  # Lakekeeper truncates longer search strings to this many characters
RESULTS = 10  # Lakekeeper answers its ten best matches


class SearchTabularRequest(msgspec.Struct, rename="kebab", forbid_unknown_fields=True):
    search: str


class TabularId(msgspec.Struct, frozen=True):
    """Lakekeeper's tagged tabular id: `{"type": "table", "id": "..."}`."""

    type: Literal["table", "view"]
    id: uuid.UUID


class SearchTabular(msgspec.Struct, rename="kebab", frozen=True):
    namespace_name: list[str]
    tabular_name: str
    tabular_id: TabularId
    distance: float | None  # lower is better: 0 for the id or the exact name


class SearchTabularResponse(msgspec.Struct, rename="kebab"):
    tabulars: list[SearchTabular]


def _distance(hit: SearchHit, text: str, tabular_id: uuid.UUID | None) -> float:
    """0 for an id or exact-name match; otherwise the share of the name the text does not cover, plus 1 when the
    name only contains it (a name that starts with it comes first), so the order is the projection's."""
    if hit.id == tabular_id:
        return 0.0
    key = name_key(hit.name)
    uncovered = 1 - len(name_key(text)) / max(len(key), 1)
    return round(uncovered + (0.0 if key.startswith(name_key(text)) else 1.0), 4)


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


@post("/warehouse/{warehouse_id:uuid}/search-tabular", status_code=200, opt=requires(on_warehouse(None)))
async def search_tabular(
    req: NamedDependency[RequestScope],
    conn: NamedDependency[Connection],
    warehouse_id: FromPath[uuid.UUID],
    data: JSONBody[SearchTabularRequest],
) -> SearchTabularResponse:
    """Tables and views whose name contains `search` (case-insensitive; cut to 64 characters) or whose id it is,
    best first; only what the caller may describe (a warehouse they cannot see answers 404, as a missing one).

    The index is a process projection: a table created a moment ago may not be found yet.

    Raises:
        BadRequestError: `search` is blank.
    """
    text = data.search.strip()[:MAX_SEARCH]
    if not text:
        raise BadRequestError("search must not be blank")
    tabular_id = _uuid(text)
    hits = await req.access.search(conn, warehouse_id, text, RESULTS, tabular_id=tabular_id)
    return SearchTabularResponse(
        tabulars=[
            SearchTabular(
                namespace_name=hit.namespace,
                tabular_name=hit.name,
                tabular_id=TabularId(hit.kind, hit.id),
                distance=_distance(hit, text, tabular_id),
            )
            for hit in hits
        ]
    )
