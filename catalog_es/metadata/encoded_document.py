"""A commit's canonical JSON spliced from its base's: the members it kept and the lists' old elements are copied.

A document's canonical JSON (`catalog_es.metadata.table_changes.encode_metadata`: keys sorted at every level, no
whitespace) is its top-level members in key order, each the canonical JSON of its value. A commit's document keeps
most members of its base as the very objects (`catalog_es.metadata.commit_cache.document_after`) and grows the
history lists (`snapshots`, `snapshot-log`) at their end, so its JSON is the base's bytes for those members, with
the new list elements encoded after them: the same bytes as encoding it whole (tested against it), at the cost of
copying them rather than encoding O(history) objects. The metadata file stays O(history) (Iceberg's design); its
encoding no longer walks the history on every commit.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import msgspec

from catalog_es.events import Json


class EncodedDocument(NamedTuple):
    """A document's canonical JSON and where each top-level member's value lies in it."""

    encoded: bytes
    spans: dict[str, tuple[int, int]]  # key -> (start, end) of its value's JSON in `encoded`


def _encode(value: Any) -> bytes:
    return msgspec.json.encode(value, order="sorted")


def encode_document(
    document: Json, base: Json | None = None, base_encoded: EncodedDocument | None = None
) -> EncodedDocument:
    """`document`'s canonical JSON; `base_encoded` is `base`'s, whose members `document` shares are copied.

    A member is reused when it is the very object of the base's; a list when it starts with the very elements of
    the base's (only the new elements are encoded). Anything else is encoded.
    """
    reuse = _Base(memoryview(base_encoded.encoded), base_encoded.spans, base) if base and base_encoded else None
    pieces: list[bytes | memoryview] = [b"{"]
    spans: dict[str, tuple[int, int]] = {}
    offset = 1
    for index, key in enumerate(sorted(document)):
        prefix = (b"," if index else b"") + _encode(key) + b":"
        pieces.append(prefix)
        offset += len(prefix)
        value = document[key]
        parts = _reused(reuse, key, value) if reuse is not None else None
        if parts is None:
            parts = [_encode(value)]
        pieces.extend(parts)
        length = sum(len(part) for part in parts)
        spans[key] = (offset, offset + length)
        offset += length
    pieces.append(b"}")
    return EncodedDocument(b"".join(pieces), spans)


class _Base(NamedTuple):
    encoded: memoryview
    spans: dict[str, tuple[int, int]]
    document: Json


def _reused(base: _Base, key: str, value: Any) -> list[bytes | memoryview] | None:
    """The member's JSON as parts taken from the base's bytes where `value` shares the base's objects; None: encode."""
    span = base.spans.get(key)
    if span is None or key not in base.document:
        return None
    old, view = base.document[key], base.encoded
    start, end = span
    if value is old:
        return [view[start:end]]
    if (
        isinstance(value, list)
        and isinstance(old, list)
        and 0 < len(old) < len(value)
        and all(map(operator.is_, old, value))  # the very elements: their JSON is the base's, byte for byte
    ):
        tail = _encode(value[len(old) :])  # "[...]": its elements follow the base's after a comma
        return [view[start : end - 1], b",", memoryview(tail)[1:]]
    return None
