"""Tables the S3 signer acts on: by id, or the table whose location is the longest prefix of an object's."""

from __future__ import annotations

import uuid
from typing import Final

from catalog_es.state import TabularRow
from catalog_es.store.database import Connection

_TABLE: Final = (
    "SELECT t.id, t.warehouse_id, t.namespace_id, n.parts, t.name, t.location, t.metadata_location,"
    " t.metadata, t.version, 'table' FROM tables t JOIN namespaces n ON n.id = t.namespace_id"
)


async def table_by_id(conn: Connection, warehouse_id: uuid.UUID, table_id: uuid.UUID) -> TabularRow | None:
    cursor = await conn.execute(f"{_TABLE} WHERE t.warehouse_id = %s AND t.id = %s".encode(), (warehouse_id, table_id))
    row = await cursor.fetchone()
    return TabularRow(*row) if row else None


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
    cursor = await conn.execute(f"{query} ORDER BY length(t.location) DESC LIMIT 1".encode(), params)
    row = await cursor.fetchone()
    return TabularRow(*row) if row else None


def _ancestors(location: str) -> list[str]:
    """`s3://b/a/t/f` → `s3://b/a`, `s3://b/a/t`, `s3://b/a/t/f` (and each with a trailing slash)."""
    scheme, _, rest = location.partition("://")
    bucket, _, key = rest.partition("/")
    found, path = [], f"{scheme}://{bucket}"
    for segment in key.split("/"):
        path = f"{path}/{segment}"
        found += [path, path + "/"]
    return found


_VIEW: Final = (
    "SELECT v.id, v.warehouse_id, v.namespace_id, n.parts, v.name, v.location, v.metadata_location,"
    " v.metadata, v.version, 'view' FROM views v JOIN namespaces n ON n.id = v.namespace_id"
)


async def view_by_id(conn: Connection, warehouse_id: uuid.UUID, view_id: uuid.UUID) -> TabularRow | None:
    cursor = await conn.execute(f"{_VIEW} WHERE v.warehouse_id = %s AND v.id = %s".encode(), (warehouse_id, view_id))
    row = await cursor.fetchone()
    return TabularRow(*row) if row else None
