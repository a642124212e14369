"""A table's or view's metadata document after a commit event: handed over by its writer, recorded whole, or replayed.

A commit event records the change; replaying it needs the document before it: the one kept for its previous
metadata location in the `MetadataDocuments` the projector was given (a rebuild replaying a table's commits one after
another reads and parses each document once, not once per commit, and checks each replayed table document's digest
on its JSON spliced from the previous one's), else the tabular's row in the read model being built (live, a
rebuild's shadow or an as-of scratch schema: the search path's `tables` or `views`). Request-path commits hand over
the documents they computed (and kept in the same `MetadataDocuments`).
"""

from __future__ import annotations

from psycopg import sql

from catalog_es.events import Json, TableCommitted, ViewCommitted
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.encoded_document import encode_document
from catalog_es.metadata.table_changes import check_digest, check_encoded_digest, replay_commit, replay_view_commit
from catalog_es.store.database import Connection

Commit = TableCommitted | ViewCommitted


class ReplayBaseMissingError(Exception):
    """The read model does not hold the document a commit was applied to: the log has been replayed out of order."""


class TabularDocuments:
    """The documents commit events result in, kept by metadata location in `documents` (bounded)."""

    def __init__(self, documents: MetadataDocuments) -> None:
        self._documents = documents

    async def after_commit(
        self, conn: Connection, event: Commit, written: Json | None, pending: Json | None = None
    ) -> Json:
        """The document `event` results in; `written` is the one its writer computed, if at hand; `pending`, the
        document at the event's previous location when the caller holds it (a row it has not written yet).

        Raises:
            MetadataDigestMismatchError: the replayed (or recorded) document is not the one the commit produced.
            ReplayBaseMissingError: the row is not at the commit's previous metadata location.
        """
        where = f"{event.entity} {event.entity_id} commit to {event.metadata_location}"
        if written is not None:  # the request path: its writer keeps the document in the shared documents
            return written
        if event.metadata is not None:
            check_digest(event.metadata, event.metadata_sha256, where)
            self._documents.remember(event.metadata_location, event.metadata)
            return event.metadata
        previous = event.previous_metadata_location
        base = pending if pending is not None else self._documents.document(previous)
        if base is None:
            base = await _row_document(conn, event)
        if isinstance(event, ViewCommitted):
            document = replay_view_commit(base, event.updates, event.applied_at_ms)
            check_digest(document, event.metadata_sha256, where)
            self._documents.remember(event.metadata_location, document)
            return document
        parsed, document = replay_commit(
            self._documents.parse(previous, base), base, previous, event.updates, event.applied_at_ms
        )
        encoded = encode_document(document, base, self._documents.encoded(previous, base))  # spliced from the base's
        check_encoded_digest(encoded.encoded, event.metadata_sha256, where)
        self._documents.remember(event.metadata_location, document, parsed, encoded)
        return document


async def _row_document(conn: Connection, event: Commit) -> Json:
    relation = sql.Identifier("views" if isinstance(event, ViewCommitted) else "tables")
    query = sql.SQL("SELECT metadata_location, metadata FROM {} WHERE id = %s").format(relation)
    cursor = await conn.execute(query, (event.entity_id,))
    row = await cursor.fetchone()
    if row is None or row[0] != event.previous_metadata_location:
        found = row[0] if row else "no row"
        raise ReplayBaseMissingError(
            f"{event.entity} {event.entity_id}: the commit to {event.metadata_location} was applied to"
            f" {event.previous_metadata_location}, the read model holds {found}"
        )
    document: Json = row[1]
    return document
