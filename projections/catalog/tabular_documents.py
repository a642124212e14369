"""A table's or view's metadata document after a commit event: handed over by its writer, recorded whole, or replayed.

A commit event records the change; replaying it needs the document before it, which is the tabular's row in the
read model being built (live, a rebuild's shadow or an as-of scratch schema: the search path's `tables` or
`views`). The last document of each recently replayed tabular is kept (a table's with its parsed form), so a
rebuild replaying a table's commits one after another reads and parses each document once, not once per commit.
The request path keeps nothing here: its commits hand over the documents they computed.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from typing import NamedTuple

from psycopg import sql
from pyiceberg.table.metadata import TableMetadata

from catalog_es.events import Json, TableCommitted, ViewCommitted
from catalog_es.metadata.table_changes import check_digest, replay_commit, replay_view_commit
from catalog_es.metadata.tables import parse_metadata
from catalog_es.store.database import Connection

Commit = TableCommitted | ViewCommitted


class _Known(NamedTuple):
    location: str
    document: Json
    parsed: TableMetadata | None  # a table's, parsed when first needed


class ReplayBaseMissingError(Exception):
    """The read model does not hold the document a commit was applied to: the log has been replayed out of order."""


class TabularDocuments:
    """The latest document of recently seen tables and views, by id (bounded; an entry is checked by its location)."""

    def __init__(self, capacity: int = 32) -> None:
        self._capacity = capacity
        self._known: OrderedDict[uuid.UUID, _Known] = OrderedDict()

    async def after_commit(self, conn: Connection, event: Commit, written: Json | None) -> Json:
        """The document `event` results in; `written` is the one its writer computed, if at hand.

        Raises:
            MetadataDigestMismatchError: the replayed (or recorded) document is not the one the commit produced.
            ReplayBaseMissingError: the row is not at the commit's previous metadata location.
        """
        where = f"{event.entity} {event.entity_id} commit to {event.metadata_location}"
        if written is not None:  # the request path: the next commit hands its document over too, keep nothing
            self._known.pop(event.entity_id, None)
            return written
        if event.metadata is not None:
            check_digest(event.metadata, event.metadata_sha256, where)
            return self._keep(event.entity_id, _Known(event.metadata_location, event.metadata, None))
        base = await self._base(conn, event)
        if isinstance(event, ViewCommitted):
            document, parsed = replay_view_commit(base.document, event.updates, event.applied_at_ms), None
        else:
            base_parsed = base.parsed if base.parsed is not None else parse_metadata(base.document)
            parsed, document = replay_commit(
                base_parsed, base.document, event.previous_metadata_location, event.updates, event.applied_at_ms
            )
        check_digest(document, event.metadata_sha256, where)
        return self._keep(event.entity_id, _Known(event.metadata_location, document, parsed))

    async def _base(self, conn: Connection, event: Commit) -> _Known:
        known = self._known.get(event.entity_id)
        if known is not None and known.location == event.previous_metadata_location:
            return known
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
        return _Known(row[0], row[1], None)

    def _keep(self, entity_id: uuid.UUID, known: _Known) -> Json:
        if self._capacity > 0:
            self._known[entity_id] = known
            self._known.move_to_end(entity_id)
            while len(self._known) > self._capacity:
                self._known.popitem(last=False)
        return known.document
