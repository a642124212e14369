"""A table's or view's metadata document after a commit event: handed over by its writer, recorded whole, or replayed.

A commit event records the change; replaying it needs the document before it: the one kept for its previous
metadata location in the `MetadataDocuments` the projector was given (a rebuild replaying a table's commits one after
another reads and parses each document once, not once per commit, and checks each replayed table document's digest
on its JSON spliced from the previous one's), else the tabular's row in the read model being built (live, a
rebuild's shadow or an as-of scratch schema: the search path's `tables` or `views`). Request-path commits hand over
the documents they computed (and kept in the same `MetadataDocuments`).
"""

from __future__ import annotations

from typing import NamedTuple

from catalog_es.events import Json, TableCommitted, ViewCommitted
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.encoded_document import encode_document
from catalog_es.metadata.table_changes import check_digest, check_encoded_digest, replay_commit, replay_view_commit
from catalog_es.store.database import Connection

Commit = TableCommitted | ViewCommitted


class ReplayBaseMissingError(Exception):
    """The read model does not hold the document a commit was applied to: the log has been replayed out of order."""


class Replayed(NamedTuple):
    """The document a commit results in, and the one at its previous metadata location when known."""

    document: Json
    base: Json | None


class TabularDocuments:
    """The documents commit events result in, kept by metadata location in `documents` (bounded)."""

    def __init__(self, documents: MetadataDocuments) -> None:
        self._documents = documents

    async def after_commit(
        self, conn: Connection, event: Commit, written: Json | None, pending: Json | None = None
    ) -> Replayed:
        """The document `event` results in (and its base); `written` is the one its writer computed, if at hand;
        `pending`, the document at the event's previous location when the caller holds it (a row it has not written
        yet).

        Raises:
            MetadataDigestMismatchError: the replayed (or recorded) document is not the one the commit produced.
            ReplayBaseMissingError: the row is not at the commit's previous metadata location.
        """
        where = f"{event.entity} {event.entity_id} commit to {event.metadata_location}"
        previous = event.previous_metadata_location
        base = pending if pending is not None else self._documents.document(previous)
        whole = written if written is not None else event.metadata
        if whole is not None:
            if event.metadata is not None and written is None:
                check_digest(event.metadata, event.metadata_sha256, where)
                self._documents.remember(event.metadata_location, event.metadata)
            if base is None and isinstance(event, TableCommitted):  # the row's lists are written against it
                base = await _held_document(conn, event)
            return Replayed(whole, base)
        if base is None:
            base = await _row_document(conn, event)
        if isinstance(event, ViewCommitted):
            document = replay_view_commit(base, event.updates, event.applied_at_ms)
            check_digest(document, event.metadata_sha256, where)
            self._documents.remember(event.metadata_location, document)
            return Replayed(document, base)
        parsed, document = replay_commit(
            self._documents.parse(previous, base), base, previous, event.updates, event.applied_at_ms
        )
        encoded = encode_document(document, base, self._documents.encoded(previous, base))  # spliced from the base's
        check_encoded_digest(encoded.encoded, event.metadata_sha256, where)
        self._documents.remember(event.metadata_location, document, parsed, encoded)
        return Replayed(document, base)


async def _row_document(conn: Connection, event: Commit) -> Json:
    """The document the row holds, which must be at the commit's previous location."""
    found = await _stored_document(conn, event)
    if found is None or found[0] != event.previous_metadata_location:
        raise ReplayBaseMissingError(
            f"{event.entity} {event.entity_id}: the commit to {event.metadata_location} was applied to"
            f" {event.previous_metadata_location}, the read model holds {found[0] if found else 'no row'}"
        )
    return found[1]


async def _held_document(conn: Connection, event: TableCommitted) -> Json | None:
    """The document the table's row holds if at the commit's previous location (else the row is rewritten whole)."""
    found = await _stored_document(conn, event)
    return found[1] if found is not None and found[0] == event.previous_metadata_location else None


async def _stored_document(conn: Connection, event: Commit) -> tuple[str, Json] | None:
    view = isinstance(event, ViewCommitted)
    query = (  # a table's history lists are rows of their own (projections/catalog/document_entries.py)
        "SELECT metadata_location, metadata FROM views WHERE id = %s"
        if view
        else "SELECT metadata_location, tabular_document(metadata, id) FROM tables WHERE id = %s"
    )
    cursor = await conn.execute(query.encode(), (event.entity_id,))
    row = await cursor.fetchone()
    return (str(row[0]), row[1]) if row is not None else None
