"""The cheaper commit (issue 19 §2): a commit's document dumped from its base's (models are kept by location in
`catalog_es.metadata.document_cache`).

pyiceberg applies updates with shallow model copies, so a field the commit did not touch is the very object of the
base; its JSON is then the base document's, and only the changed fields (and new list elements) are dumped.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel
from pyiceberg.table.metadata import TableMetadata

from catalog_es.events import Json
from catalog_es.metadata.snapshot_index import leading_equal
from catalog_es.metadata.tables import metadata_to_json


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
    shared = _shared_prefix(new, old)
    if shared == len(new):  # e.g. a snapshot expired from the end, or nothing left
        return old_json[:shared]
    if shared == len(old):  # the common case, a list that grew (snapshots, their log): copy, dump the new tail
        tail = [_element_json(element) for element in new[shared:]]
        return None if any(element is _DUMP for element in tail) else [*old_json, *tail]
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


def _shared_prefix(new: list[Any], old: list[Any]) -> int:
    """How many leading elements `new` shares with `old`: the very objects, found without a Python loop (or equal
    ones, which have the same JSON)."""
    length = min(len(new), len(old))
    if leading_equal(new, old):
        return length
    for index in range(length):
        if new[index] is not old[index]:
            return index
    return length


def _element_json(element: Any) -> Any:
    """A new list element's JSON, or `_DUMP` when it is not a model (the list is then dumped whole)."""
    return element.model_dump(mode="json") if isinstance(element, BaseModel) else _DUMP
