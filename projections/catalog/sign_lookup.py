"""Tables the S3 signer acts on: by id, or the table whose location is the longest prefix of an object's."""

from __future__ import annotations

import uuid
from typing import Final

from catalog_es.state import TabularRow
from catalog_es.store.database import Connection
from catalog_es.tabular_kind import TABLE
from projections.catalog.tabular_rows import fetch_tabular, tabular_by_id, tabular_select

_TABLE: Final = tabular_select(TABLE)


async def table_by_id(conn: Connection, warehouse_id: uuid.UUID, table_id: uuid.UUID) -> TabularRow | None:
    return await tabular_by_id(conn, TABLE, warehouse_id, table_id)


async def table_at(conn: Connection, warehouse_id: uuid.UUID | None, location: str) -> TabularRow | None:
    """The table whose location is `location` or its nearest ancestor (in one warehouse, or in any).

    Table locations never overlap, so at most one ancestor is a table's; compared as text, segment by segment.
    """
    candidates = _ancestors(location)
    params: tuple[object, ...]
    if warehouse_id is None:
        query, params = f"{_TABLE} WHERE t.location = ANY(%s)", (candidates,)
    else:
        query, params = f"{_TABLE} WHERE t.warehouse_id = %s AND t.location = ANY(%s)", (warehouse_id, candidates)
    return await fetch_tabular(conn, f"{query} ORDER BY length(t.location) DESC LIMIT 1", params)


def _ancestors(location: str) -> list[str]:
    """`s3://b/a/t/f` → `s3://b/a`, `s3://b/a/t`, `s3://b/a/t/f` (and each with a trailing slash)."""
    scheme, _, rest = location.partition("://")
    bucket, _, key = rest.partition("/")
    found, path = [], f"{scheme}://{bucket}"
    for segment in key.split("/"):
        path = f"{path}/{segment}"
        found += [path, path + "/"]
    return found
