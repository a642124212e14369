"""A table's metadata document after a commit event: handed over by its writer, recorded whole, or replayed.

A commit event records the change; replaying it needs the document before it, which is the table's row in the
read model being built (live, a rebuild's shadow or an as-of scratch schema: the search path's `tables`). The
last document of each recently replayed table is kept with its parsed form, so a rebuild replaying a table's
commits one after another reads and parses each document once, not once per commit.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from typing import NamedTuple

from pyiceberg.table.metadata import TableMetadata

from catalog_es.events import Json, TableCommitted
from catalog_es.metadata.table_changes import check_digest, replay_commit
from catalog_es.metadata.tables import parse_metadata
from catalog_es.store.database import Connection


class _Known(NamedTuple):
    location: str
    document: Json
    parsed: TableMetadata | None  # parsed when first needed


class ReplayBaseMissingError(Exception):
    """The read model does not hold the document a commit was applied to: the log has been replayed out of order."""


class TableDocuments:
    """The latest document of recently seen tables, by table id (bounded; an entry is checked by its location)."""

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self._known: OrderedDict[uuid.UUID, _Known] = OrderedDict()

    def remember(self, table_id: uuid.UUID, location: str, document: Json) -> None:
        """The table's document is now `document`, stored at `location`."""
        self._keep(table_id, _Known(location, document, None))

    async def after_commit(self, conn: Connection, event: TableCommitted, written: Json | None) -> Json:
        """The document `event` results in; `written` is the one its writer computed, if at hand.

        Raises:
            MetadataDigestMismatchError: the replayed (or recorded) document is not the one the commit produced.
            ReplayBaseMissingError: the table's row is not at the commit's previous metadata location.
        """
        where = f"table {event.table_id} commit to {event.metadata_location}"
        if written is not None or event.metadata is not None:
            document = written if written is not None else event.metadata
            assert document is not None
            if written is None:
                check_digest(document, event.metadata_sha256, where)
            self.remember(event.table_id, event.metadata_location, document)
            return document
        base = await self._base(conn, event)
        parsed = base.parsed if base.parsed is not None else parse_metadata(base.document)
        updated, document = replay_commit(
            parsed, base.document, event.previous_metadata_location, event.updates, event.applied_at_ms
        )
        check_digest(document, event.metadata_sha256, where)
        self._keep(event.table_id, _Known(event.metadata_location, document, updated))
        return document

    async def _base(self, conn: Connection, event: TableCommitted) -> _Known:
        known = self._known.get(event.table_id)
        if known is not None and known.location == event.previous_metadata_location:
            return known
        cursor = await conn.execute("SELECT metadata_location, metadata FROM tables WHERE id = %s", (event.table_id,))
        row = await cursor.fetchone()
        if row is None or row[0] != event.previous_metadata_location:
            found = row[0] if row else "no row"
            raise ReplayBaseMissingError(
                f"Table {event.table_id}: the commit to {event.metadata_location} was applied to"
                f" {event.previous_metadata_location}, the read model holds {found}"
            )
        return _Known(row[0], row[1], None)

    def _keep(self, table_id: uuid.UUID, known: _Known) -> None:
        if self._capacity <= 0:
            return
        self._known[table_id] = known
        self._known.move_to_end(table_id)
        while len(self._known) > self._capacity:
            self._known.popitem(last=False)
