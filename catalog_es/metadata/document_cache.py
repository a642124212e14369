"""Metadata documents kept by metadata location: a hot table's commit neither reads nor parses its O(history) base.

A metadata location names one immutable document, so the document a commit produced (and the pydantic model it was
made from) serves every later commit to that table: the commit path reads only the table's row head and takes the
document from here, and the inline projector replays a commit from the document kept for its base. One instance is
built by the composition root (`api.container.open_services`) and handed to the commands and the catalog projector.
"""

from __future__ import annotations

from typing import NamedTuple

from cachetools import LRUCache
from pyiceberg.table.metadata import TableMetadata

from catalog_es.events import Json
from catalog_es.metadata.encoded_document import EncodedDocument
from catalog_es.metadata.snapshot_index import indexed
from catalog_es.metadata.tables import parse_metadata


class _Entry(NamedTuple):
    document: Json
    parsed: TableMetadata | None  # a table's model, once a commit needed it (views keep none)
    encoded: EncodedDocument | None  # its canonical JSON, when a commit encoded it (the next one splices it)


class MetadataDocuments:
    """Bounded LRU of metadata documents (and parsed table models) by metadata location; entries never go stale."""

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._entries: LRUCache[str, _Entry] = LRUCache(max(capacity, 1))

    def document(self, location: str) -> Json | None:
        """The document stored at `location`, if kept."""
        entry = self._entries.get(location)
        return entry.document if entry is not None else None

    def encoded(self, location: str, document: Json) -> EncodedDocument | None:
        """The canonical JSON kept with `document` (the very object kept at `location`), if any."""
        entry = self._entries.get(location)
        return entry.encoded if entry is not None and entry.document is document else None

    def parsed(self, location: str) -> TableMetadata | None:
        """The parsed table metadata stored at `location`, if kept."""
        entry = self._entries.get(location)  # the LRU's get: `location` is now the most recently used
        return entry.parsed if entry is not None else None

    def parse(self, location: str, document: Json) -> TableMetadata:
        """The table metadata stored at `location` (whose document is `document`), parsed at most once.

        Raises:
            BadRequestError: the document is not valid table metadata.
        """
        entry = self._entries.get(location)
        if entry is not None and entry.parsed is not None and _same_document(entry.parsed, document):
            return entry.parsed
        parsed = parse_metadata(document)
        self.remember(location, document, parsed)
        return parsed

    def remember(
        self,
        location: str,
        document: Json,
        parsed: TableMetadata | None = None,
        encoded: EncodedDocument | None = None,
    ) -> None:
        """Keep the document just written (or read) at `location`: the table's next commit starts from it."""
        if self._capacity <= 0:
            return
        # A model an update made of another class (a format upgrade) is indexed here, for the commits after it.
        self._entries[location] = _Entry(document, indexed(parsed) if parsed is not None else None, encoded)

    def __len__(self) -> int:
        return len(self._entries)


def _same_document(metadata: TableMetadata, document: Json) -> bool:
    """A cheap guard against a location reused with other content (it never is; a mismatch is parsed afresh)."""
    return (
        document.get("last-updated-ms") == metadata.last_updated_ms
        and document.get("table-uuid") == str(metadata.table_uuid)
        and len(document.get("snapshots") or ()) == len(metadata.snapshots)
    )
