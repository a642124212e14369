"""loadTable's table statements of concurrent requests read together: one statement, one round trip and one pooled
connection for all the tables asked for while the previous statement ran.

Each request's table is read by a statement that starts after it asked, with the log head of the same snapshot
(`CatalogReadModel.table_document_at_head`, as one statement for many tables): what it reads is as current as
its own statement would have been. At most `statements` run at once (each on its own pooled connection), so a
burst never takes more than those connections; the tables asked for meanwhile wait for the next one. A failed
statement fails every request it read for, with its error (catalog_es/batches.py, as every batching of the catalog).
"""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.batches import Batches
from catalog_es.identifiers import Namespace, name_key
from catalog_es.store.database import Pool
from catalog_es.store.read_connection import ReadConnection

Found = tuple[int | None, tuple[str, bytes] | None]
"""The log head (None: no counter row) and the table's metadata location and document, if it exists."""

_Ask = tuple[uuid.UUID, str, str]

# One row per table asked for (its ordinal), with the head; no row at all when the log has no counter row. The
# tables come as one JSON array of `[warehouse id, namespace key, name key]` (one text parameter: psycopg dumps
# three arrays of a varying length at several times the cost). `LIMIT 1` (a name is one table at most) keeps the
# lookup a subquery per ask on the unique keys' indexes: flattened into a join of unknown JSON rows, the generic
# plan a pooled connection keeps hash-joined a scan of every table of the catalog (25 ms per loadTable at 1,000
# tables, growing with the catalog).
_TABLES_AT_HEAD = (
    b"SELECT c.position, q.i, d.metadata_location, d.document FROM catalog_event_counter c"
    b" CROSS JOIN json_array_elements(%s::json) WITH ORDINALITY AS q(ask, i)"
    b" LEFT JOIN LATERAL (SELECT t.metadata_location, tabular_document_text(t.metadata, t.id) AS document"
    b" FROM tables t JOIN namespaces n ON n.id = t.namespace_id"
    b" WHERE n.warehouse_id = (q.ask->>0)::uuid AND n.key = q.ask->>1 AND t.name_key = q.ask->>2 LIMIT 1) d ON true"
)
_ASKS = msgspec.json.Encoder()


class TableDocumentBatch:
    def __init__(self, pool: Pool, statements: int = 4) -> None:
        self._pool = pool
        self._batches: Batches[_Ask, Found] = Batches(self._read, at_once=statements)

    async def table_document_at_head(self, warehouse_id: uuid.UUID, namespace: Namespace, name: str) -> Found:
        """Names hold no NUL (PostgreSQL's text cannot: the whole statement would fail).

        Raises: what the statement raised (psycopg's errors, the pool's timeout).
        """
        return await self._batches.ask((warehouse_id, namespace.key, name_key(name)))

    async def _read(self, batch: list[_Ask]) -> list[Found | Exception]:
        asks = _ASKS.encode(batch).decode()
        async with ReadConnection(self._pool) as conn:
            cursor = await conn.execute(_TABLES_AT_HEAD, (asks,))
            rows = await cursor.fetchall()
        found: list[Found | Exception] = [(None, None)] * len(batch)
        for head, ordinal, location, document in rows:
            table = None if location is None else (str(location), str(document).encode())
            found[int(ordinal) - 1] = (int(head), table)
        return found
