"""GET /management/v1/warehouse/{id}/search: tables and views by name, from the `tabular_search` projection."""

from __future__ import annotations

import uuid
from typing import Annotated

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.rules import on_warehouse
from catalog_es.errors import BadRequestError
from catalog_es.store.database import Connection
from projections.search import SearchHit

MAX_LIMIT = 1000


class SearchResponse(msgspec.Struct, rename="kebab"):
    tabulars: list[SearchHit]


@get("/warehouse/{warehouse_id:uuid}/search", opt=requires(on_warehouse(None)))
async def search_warehouse(
    req: NamedDependency[RequestScope],
    conn: NamedDependency[Connection],
    warehouse_id: FromPath[uuid.UUID],
    q: Annotated[str, QueryParameter(min_length=1, max_length=200)],
    limit: Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT)] = 50,
) -> SearchResponse:
    """Live tables and views whose name contains `q` (case-insensitive), those starting with it first.

    The index is a process projection: a table created a moment ago may not be found yet. Callers see only
    what they may describe (a warehouse they cannot see answers 404, as a missing one).

    Raises:
        BadRequestError: `q` is blank.
    """
    if not q.strip():
        raise BadRequestError("Query parameter q must not be blank")
    return SearchResponse(tabulars=await req.access.search(conn, warehouse_id, q.strip(), limit))
