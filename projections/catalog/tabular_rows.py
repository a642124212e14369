"""Live tables and views as `TabularRow`s: one SELECT per kind, its columns named as the row's fields."""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.rows import class_row

from catalog_es.state import TabularRow
from catalog_es.store.database import Connection
from catalog_es.tabular_kind import TABLE, TabularKind


def document_column(kind: TabularKind, alias: str) -> str:
    """The whole metadata document of the row `alias` of `kind`'s relation, as the column `metadata`: a table's
    history lists are rows of `table_document_entries` (projections/catalog/document_entries.py)."""
    column = f"{alias}.metadata"
    return f"tabular_document({column}, {alias}.id) AS metadata" if kind is TABLE else column


def tabular_select(kind: TabularKind) -> str:
    """`SELECT … FROM <its relation> t JOIN namespaces n`, for a WHERE clause on `t` and `n` to follow."""
    return (
        "SELECT t.id, t.warehouse_id, t.namespace_id, n.parts AS namespace, t.name, t.location, t.metadata_location,"
        f" {document_column(kind, 't')}, t.version, '{kind.name}' AS kind"
        f" FROM {kind.relation} t JOIN namespaces n ON n.id = t.namespace_id"
    )


async def fetch_tabular(conn: Connection, query: str, params: tuple[Any, ...]) -> TabularRow | None:
    """The first row of a `tabular_select` query, built by column name."""
    async with conn.cursor(row_factory=class_row(TabularRow)) as cursor:
        await cursor.execute(query.encode(), params)
        return await cursor.fetchone()


async def tabular_by_id(
    conn: Connection, kind: TabularKind, warehouse_id: uuid.UUID, tabular_id: uuid.UUID
) -> TabularRow | None:
    """The live one of `kind` with this id in the warehouse."""
    query = f"{tabular_select(kind)} WHERE t.warehouse_id = %s AND t.id = %s"
    return await fetch_tabular(conn, query, (warehouse_id, tabular_id))
