"""The cheaper commit (issue 19 §2): parsed metadata kept by location, and a commit's document dumped from its base's.

A metadata location names one immutable document, so the pydantic model parsed from it (or built by the commit
that wrote it) serves every later commit to that table: a hot table's commit parses nothing. pyiceberg applies
updates with shallow model copies, so a field the commit did not touch is the very object of the base; its JSON is
then the base document's, and only the changed fields (and new list elements) are dumped.
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cache
from typing import Any

from pydantic import BaseModel
from pyiceberg.table.metadata import TableMetadata

from catalog_es.events import Json
from catalog_es.metadata.tables import metadata_to_json, parse_metadata


class ParsedMetadataCache:
    """Bounded LRU of parsed table metadata by metadata location (per process; entries never go stale)."""

    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[str, TableMetadata] = OrderedDict()

    def parse(self, location: str, document: Json) -> TableMetadata:
        """The metadata stored at `location` (whose document is `document`), parsed at most once.

        Raises:
            BadRequestError: the document is not valid table metadata.
        """
        cached = self._entries.get(location)
        if cached is not None and _same_document(cached, document):
            self._entries.move_to_end(location)
            return cached
        parsed = parse_metadata(document)
        self.remember(location, parsed)
        return parsed

    def remember(self, location: str, metadata: TableMetadata) -> None:
        """Keep the metadata just written at `location` (the next commit to the table starts from it)."""
        if self._capacity <= 0:
            return
        self._entries[location] = metadata
        self._entries.move_to_end(location)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)


def _same_document(metadata: TableMetadata, document: Json) -> bool:
    """A cheap guard against a location reused with other content (it never is; a mismatch is parsed afresh)."""
    return (
        document.get("last-updated-ms") == metadata.last_updated_ms
        and document.get("table-uuid") == str(metadata.table_uuid)
        and len(document.get("snapshots") or ()) == len(metadata.snapshots)
    )


def document_after(base: TableMetadata, base_document: Json, updated: TableMetadata) -> Json:
    """`metadata_to_json(updated)`, reusing the JSON of whatever `updated` shares with `base` (its document)."""
    if type(updated) is not type(base):  # e.g. an upgrade of the format version: every field is new
        return metadata_to_json(updated)
    serializers = _plain_serializers(type(updated))
    document: Json = {}
    whole: set[str] = set()
    for name, info in type(updated).model_fields.items():  # the full dump's key order
        key = info.alias or name
        new, old = getattr(updated, name), getattr(base, name)
        if new is old:
            if key in base_document:
                document[key] = base_document[key]
            continue
        if name in serializers:  # what the full dump would serialize (pyiceberg's v1 snapshots drop a field)
            new, old = getattr(updated, serializers[name])(new), getattr(base, serializers[name])(old)
        elements = _list_json(new, old, base_document.get(key))
        if elements is None:
            whole.add(name)
            document[key] = _DUMP  # a place in the key order, filled below
        else:
            document[key] = elements
    if whole:
        dumped = updated.model_dump(mode="json", include=whole)
        for key in [key for key, value in document.items() if value is _DUMP]:
            if key in dumped:
                document[key] = dumped[key]
            else:  # None: the full dump leaves it out
                del document[key]
    return document


_DUMP: Any = object()


@cache
def _plain_serializers(model: type[TableMetadata]) -> dict[str, str]:
    """Field name -> the model's plain field-serializer method for it."""
    found: dict[str, str] = {}
    for decorator in model.__pydantic_decorators__.field_serializers.values():
        if decorator.info.mode == "plain":
            found |= dict.fromkeys(decorator.info.fields, decorator.cls_var_name)
    return found


def _list_json(new: Any, old: Any, old_json: Any) -> list[Any] | None:
    """A list field's JSON: the old elements' where `new` keeps them, the others dumped; None: dump it whole."""
    if not (isinstance(new, list) and isinstance(old, list) and isinstance(old_json, list)) or len(old_json) != len(
        old
    ):
        return None
    known = {id(element): index for index, element in enumerate(old)}
    elements: list[Any] = []
    for element in new:
        index = known.get(id(element))
        if index is not None:
            elements.append(old_json[index])
        elif isinstance(element, BaseModel):
            elements.append(element.model_dump(mode="json"))
        else:
            return None
    return elements
