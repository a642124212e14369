"""A table document's history lists as rows of `table_document_entries`: its head, a commit's diff, their writes.

`tables.metadata` holds the document with each present history list (`HISTORY_LISTS`, the ones that grow with every
commit) as `[]`; its elements are rows ordered by `ordinal` (`table_document_entries.sql`, whose `tabular_document`
and `tabular_document_text` reassemble the whole document for readers). A commit writes the head, inserts the
elements it appended after the list's last ordinal and deletes or replaces the ones it removed or changed (expiring
snapshots, trimming the metadata log), by their positions in the base document the row holds: O(change) rows
instead of the whole O(history) document.
"""

from __future__ import annotations

import uuid
from typing import Any, NamedTuple

import msgspec
from psycopg.types.json import Jsonb

from catalog_es.events import Json
from catalog_es.metadata.encoded_document import EncodedDocument
from catalog_es.store.database import Connection

HISTORY_LISTS = ("metadata-log", "snapshot-log", "snapshots")
# The rows as `audit verify` compares them: by position, not ordinal (a rebuild writes a batch's commits at once).
COMPARED_ENTRIES = (
    "SELECT table_id, dropped, list, row_number() OVER (PARTITION BY table_id, dropped, list ORDER BY ordinal)"
    " AS position, entry FROM {}"
)


class Stored(NamedTuple):
    """The document a table's row holds, and its metadata location (the row's `metadata_location`)."""

    location: str
    document: Json


class ListChange(NamedTuple):
    """A list's change: the base's elements removed and replaced (by position), then the ones appended."""

    removed: list[int]
    replaced: list[tuple[int, Any]]
    appended: list[Any]


def document_head(document: Json) -> Json:
    """`document` with each history list it holds as `[]` (what `tables.metadata` stores)."""
    return {**document, **{key: [] for key in HISTORY_LISTS if isinstance(document.get(key), list)}}


def head_json(document: Json, encoded: EncodedDocument | None) -> bytes:
    """`document_head(document)` as JSON: cut from `encoded` (`document`'s canonical JSON) when at hand."""
    if encoded is None:
        return msgspec.json.encode(document_head(document))
    view = memoryview(encoded.encoded)
    cuts = sorted(encoded.spans[key] for key in HISTORY_LISTS if isinstance(document.get(key), list))
    pieces: list[bytes | memoryview] = []
    at = 0
    for start, end in cuts:
        pieces += [view[at:start], b"[]"]
        at = end
    pieces.append(view[at:])
    return b"".join(pieces)


def list_change(base: list[Any], new: list[Any]) -> ListChange:
    """How `new` is made from `base`: the base's elements kept, replaced or removed in order, then appended ones.

    A list that only grew is recognised by list equality in C (identical elements are not compared); otherwise the
    base's elements are matched in order against `new`'s: one that differs from the next of `new` is replaced by it
    when the elements after both agree (expiring snapshots drops the parent id of the one after them), else removed;
    what is left of `new` is appended. Always correct; minimal for the removals a commit makes (from the front of a
    log, from the middle of the snapshots).
    """
    if len(base) <= len(new) and new[: len(base)] == base:
        return ListChange([], [], new[len(base) :])
    removed: list[int] = []
    replaced: list[tuple[int, Any]] = []
    kept = 0
    for position, element in enumerate(base):
        if kept < len(new) and (new[kept] is element or new[kept] == element):
            kept += 1
        elif kept < len(new) and _next_agree(base, position + 1, new, kept + 1):
            replaced.append((position, new[kept]))
            kept += 1
        else:
            removed.append(position)
    return ListChange(removed, replaced, new[kept:])


def _next_agree(base: list[Any], at: int, new: list[Any], new_at: int) -> bool:
    """Whether `base` from `at` and `new` from `new_at` go on alike: both end, or their next elements are equal."""
    if at == len(base) or new_at == len(new):
        return at == len(base) and new_at == len(new)
    return bool(new[new_at] is base[at] or new[new_at] == base[at])


def _elements(document: Json, key: str) -> list[Any]:
    value = document.get(key)
    return value if isinstance(value, list) else []


def _json(element: Any) -> str:
    return msgspec.json.encode(element).decode()


# One round trip: the head, only while the row still holds the base (else nothing is written and the count is 0),
# the removed and replaced elements by their positions in the stored lists, the appended ones after each list's last
# ordinal. The changes travel as one JSON parameter (`_changes`): psycopg dumps eight arrays at several times the cost.
_COMMIT = """
WITH changes AS (SELECT %(changes)s::jsonb AS c), head AS (
    UPDATE tables SET location = %(location)s, metadata_location = %(metadata_location)s, metadata = %(head)s,
        version = %(version)s
    WHERE id = %(id)s AND metadata_location = %(base)s RETURNING id
), positioned AS (
    SELECT s.list, s.ordinal, row_number() OVER (PARTITION BY s.list ORDER BY s.ordinal) - 1 AS position
    FROM table_document_entries s
    WHERE s.table_id = %(id)s AND NOT s.dropped
        AND s.list IN (SELECT jsonb_array_elements_text(c -> 'touched') FROM changes)
), removed AS (
    DELETE FROM table_document_entries e USING positioned p
    JOIN (SELECT r.* FROM changes, jsonb_to_recordset(c -> 'removed') AS r(list text, position bigint)) r
        ON r.list = p.list AND r.position = p.position
    WHERE e.table_id = %(id)s AND NOT e.dropped AND e.list = p.list AND e.ordinal = p.ordinal
        AND EXISTS (SELECT FROM head)
), replaced AS (
    UPDATE table_document_entries e SET entry = r.entry::text FROM positioned p
    JOIN (SELECT r.* FROM changes, jsonb_to_recordset(c -> 'replaced') AS r(list text, position bigint, entry jsonb)) r
        ON r.list = p.list AND r.position = p.position
    WHERE e.table_id = %(id)s AND NOT e.dropped AND e.list = p.list AND e.ordinal = p.ordinal
        AND EXISTS (SELECT FROM head)
), appended AS (
    INSERT INTO table_document_entries (table_id, list, ordinal, entry)
    SELECT %(id)s, a.list,
        coalesce((
            SELECT max(m.ordinal) FROM table_document_entries m
            WHERE m.table_id = %(id)s AND NOT m.dropped AND m.list = a.list
        ), -1) + row_number() OVER (PARTITION BY a.list ORDER BY a.n),
        a.entry::text
    FROM changes, ROWS FROM (jsonb_to_recordset(c -> 'appended') AS (list text, entry jsonb)) WITH ORDINALITY
        AS a(list, entry, n)
    WHERE EXISTS (SELECT FROM head)
)
SELECT count(*) FROM head
"""
_SET_HEAD = "UPDATE tables SET location = %s, metadata_location = %s, metadata = %s, version = %s WHERE id = %s"
_DELETE = "DELETE FROM table_document_entries WHERE table_id = %s AND dropped = %s"
_MOVE = "UPDATE table_document_entries SET dropped = %s WHERE table_id = %s AND dropped = NOT %s"
_INSERT = (
    "INSERT INTO table_document_entries (table_id, list, ordinal, entry)"
    " SELECT %s, u.list, u.ordinal, u.entry::jsonb::text"
    " FROM unnest(%s::text[], %s::bigint[], %s::text[]) AS u(list, ordinal, entry)"
)


_COMMIT_STATEMENT = _COMMIT.encode()


def _changes(stored: Json, document: Json) -> Json:
    """What `_COMMIT` writes to make `stored`'s lists `document`'s: the lists it removes from or replaces in
    (`touched`), their removed positions, their replaced positions with the new elements, the appended elements."""
    touched: list[str] = []
    removed: list[Json] = []
    replaced: list[Json] = []
    appended: list[Json] = []
    for key in HISTORY_LISTS:
        change = list_change(_elements(stored, key), _elements(document, key))
        if change.removed or change.replaced:
            touched.append(key)
        removed += [{"list": key, "position": position} for position in change.removed]
        replaced += [{"list": key, "position": position, "entry": element} for position, element in change.replaced]
        appended += [{"list": key, "entry": element} for element in change.appended]
    return {"touched": touched, "removed": removed, "replaced": replaced, "appended": appended}


def stored_head(head: bytes) -> Jsonb:
    """The head's JSON as the `metadata` parameter, sent as it is."""
    return Jsonb(None, dumps=lambda _: head)


async def write_entries(conn: Connection, table_id: uuid.UUID, document: Json) -> None:
    """Replace the table's rows with `document`'s lists (a new, registered or restored table; a row not at its base)."""
    await conn.execute(_DELETE, (table_id, False))
    lists: list[str] = []
    ordinals: list[int] = []
    entries: list[str] = []
    for key in HISTORY_LISTS:
        for ordinal, element in enumerate(_elements(document, key)):
            lists.append(key)
            ordinals.append(ordinal)
            entries.append(_json(element))
    if entries:
        await conn.execute(_INSERT, (table_id, lists, ordinals, entries))


async def delete_entries(conn: Connection, table_id: uuid.UUID, *, dropped: bool = False) -> None:
    """Forget the rows of the live table (else of the soft-dropped one): it is gone for good."""
    await conn.execute(_DELETE, (table_id, dropped))


async def move_entries(conn: Connection, table_id: uuid.UUID, *, dropped: bool) -> None:
    """Hand the live table's rows to its soft-dropped row (`dropped`), or back when it is undropped."""
    await conn.execute(_MOVE, (dropped, table_id, dropped))


async def commit_document(
    conn: Connection,
    table_id: uuid.UUID,
    row: tuple[str, str, int],
    document: Json,
    encoded: EncodedDocument | None,
    stored: Stored | None,
) -> None:
    """Write a table's document after commits: `row` is its location key, metadata location and version; `stored`,
    the document its row holds (the first commit's base), when known: then only the lists' changes are written."""
    location, metadata_location, version = row
    head = stored_head(head_json(document, encoded))
    if stored is not None:
        params = {
            "id": table_id,
            "location": location,
            "metadata_location": metadata_location,
            "head": head,
            "version": version,
            "base": stored.location,
            "changes": Jsonb(_changes(stored.document, document)),
        }
        cursor = await conn.execute(_COMMIT_STATEMENT, params)
        found = await cursor.fetchone()
        if found is not None and found[0]:
            return
    await conn.execute(_SET_HEAD, (location, metadata_location, head, version, table_id))
    await write_entries(conn, table_id, document)
