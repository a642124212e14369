"""A table's or view's metadata document as of a log position (or as recorded for a location), from the log alone.

Commits record changes (`table.committed.v2`), so the document after one is the last document recorded whole in
the stream at or before it (created, registered, restored, or a commit that recorded it deliberately) with every
commit after it replayed and the result checked against the digest the commit recorded.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

import msgspec
from cachetools import LRUCache
from pyiceberg.table.metadata import TableMetadata

from catalog_es.events import Json, TableCommitted, ViewCommitted, decode_event
from catalog_es.events.registry import types_of
from catalog_es.metadata.encoded_document import EncodedDocument, encode_document
from catalog_es.metadata.table_changes import check_digest, check_encoded_digest, replay_commit, replay_view_commit
from catalog_es.metadata.tables import parse_metadata
from catalog_es.store.database import Connection

# Every event that sets a tabular's document; those with a `metadata` field record it whole.
_DOCUMENT_TYPES = [
    *types_of("table", "created", "registered", "committed", "restored"),
    *types_of("view", "created", "registered", "committed"),
]
_LAST_WHOLE = (
    "SELECT max(global_position) FROM catalog_events WHERE stream_id = %s AND global_position <= %s"
    " AND type = ANY(%s) AND data ? 'metadata'"
)
_WHOLE = "SELECT data->>'metadata_location', (data->'metadata')::text FROM catalog_events WHERE global_position = %s"
_CHANGES = (
    "SELECT type, data FROM catalog_events WHERE stream_id = %s AND global_position > %s AND global_position <= %s"
    " AND type = ANY(%s) ORDER BY global_position"
)


_RECORDING = (
    "SELECT global_position FROM catalog_events WHERE stream_id = %s AND data->>'metadata_location' = %s"
    " AND type = ANY(%s) ORDER BY stream_version DESC LIMIT 1"
)


class DocumentNotInLogError(Exception):
    """No event of the stream at or before the position records a whole document: the log is not one we wrote."""


async def document_at(conn: Connection, stream_id: str, position: int) -> tuple[str, str]:
    """(metadata location, metadata document as JSON text) of the tabular `stream_id` after the event at `position`.

    Raises:
        DocumentNotInLogError: nothing in the stream up to `position` records a whole document.
        MetadataDigestMismatchError: replaying a commit did not give the document it produced.
    """
    cursor = await conn.execute(_LAST_WHOLE, (stream_id, position, _DOCUMENT_TYPES))
    row = await cursor.fetchone()
    if row is None or row[0] is None:
        raise DocumentNotInLogError(f"No whole metadata document of {stream_id} up to position {position}")
    whole = int(row[0])
    cursor = await conn.execute(_WHOLE, (whole,))
    recorded = await cursor.fetchone()
    assert recorded is not None
    location, text = str(recorded[0]), str(recorded[1])
    if whole == position:
        return location, text
    cursor = await conn.execute(_CHANGES, (stream_id, whole, position, _DOCUMENT_TYPES))
    commits = [decode_event(str(type_name), data) for type_name, data in await cursor.fetchall()]
    document = msgspec.json.decode(text)
    parsed: TableMetadata | None = None
    last: TableCommitted | ViewCommitted | None = None
    for commit in commits:
        if isinstance(commit, ViewCommitted):
            document = replay_view_commit(document, commit.updates, commit.applied_at_ms)
        elif isinstance(commit, TableCommitted):
            parsed = parsed if parsed is not None else parse_metadata(document)
            parsed, document = replay_commit(parsed, document, location, commit.updates, commit.applied_at_ms)
        else:
            raise DocumentNotInLogError(f"{stream_id}: a {commit.type_name} at or before {position} has no document")
        location, last = commit.metadata_location, commit
    if last is not None:
        check_digest(document, last.metadata_sha256, f"{stream_id} as of position {position}")
    return location, msgspec.json.encode(document).decode()


async def recorded_metadata(conn: Connection, stream_id: str, metadata_location: str) -> Json | None:
    """The metadata document a table's or view's event produced at `metadata_location` (None: no event did).

    Raises:
        MetadataDigestMismatchError: replaying a commit did not give the document it produced.
    """
    cursor = await conn.execute(_RECORDING, (stream_id, metadata_location, _DOCUMENT_TYPES))
    row = await cursor.fetchone()
    if row is None:
        return None
    try:
        _, text = await document_at(conn, stream_id, int(row[0]))
    except DocumentNotInLogError:
        return None
    document: Json = msgspec.json.decode(text)
    return document


class LoggedDocuments:
    """Tables' documents after their commits for a projector that follows the log (never the catalog read model,
    which may be ahead of it): the last one per table is kept, so a commit usually replays one change."""

    def __init__(self, capacity: int = 64) -> None:
        self._known: LRUCache[uuid.UUID, _Known] = LRUCache(capacity)

    async def after_commit(self, conn: Connection, event: TableCommitted, position: int) -> Json:
        """The document after `event`, recorded at `position`.

        Raises:
            MetadataDigestMismatchError: a replayed document is not the one its commit produced.
        """
        known = self._known.pop(event.table_id, None)
        if event.metadata is not None:
            entry = _Known(event.metadata_location, None, event.metadata, None)
        elif known is not None and known.location == event.previous_metadata_location:
            parsed = known.parsed if known.parsed is not None else parse_metadata(known.document)
            where = f"table {event.table_id} at position {position}"
            updated, document = replay_commit(
                parsed, known.document, known.location, event.updates, event.applied_at_ms
            )
            encoded = encode_document(document, known.document, known.encoded)  # spliced from the previous JSON
            check_encoded_digest(encoded.encoded, event.metadata_sha256, where)
            entry = _Known(event.metadata_location, updated, document, encoded)
        else:
            location, text = await document_at(conn, event.stream_id, position)
            entry = _Known(location, None, msgspec.json.decode(text), None)
        self._known[event.table_id] = entry
        return entry.document


class _Known(NamedTuple):
    """A table's last document: where it is, its model and its canonical JSON when replaying made them."""

    location: str
    parsed: TableMetadata | None
    document: Json
    encoded: EncodedDocument | None
