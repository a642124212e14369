"""Limits every request body must keep: nesting depth, the spec's `int`/`long` ranges, name lengths.

Why here and not in the handlers: a hostile body must be refused at the wire boundary, before any
guard, command or database sees it, with a 400 in the Iceberg envelope instead of a RecursionError,
a number PostgreSQL or a Java client cannot hold, or an index row PostgreSQL cannot store.

- Nesting: at most `MAX_JSON_DEPTH` (128) levels of arrays and objects, serde_json's default
  recursion limit and so Lakekeeper's. A schema nested 40 structs deep still fits.
- Integers: the REST spec (1.11) has no integer wider than `long`, so every integer in a body must fit a
  signed 64-bit value; a value under a key the spec types `int` (field, schema, spec and sort-order
  ids, format-version, …) must fit a signed 32-bit value. Keys are the spec's property names, which
  mean the same type wherever they occur.
- Names: a namespace level, table or view name has at most `MAX_NAME_LENGTH` (255) characters, as a
  file name on common file systems (a name becomes part of storage paths); so do the management API's
  names (project, warehouse, role, user id, name and e-mail). Free text (a role's description) has at
  most `MAX_TEXT_LENGTH` (4096) characters.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

MAX_JSON_DEPTH = 128
MAX_NAME_LENGTH = 255
MAX_TEXT_LENGTH = 4096

INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)

Name = Annotated[str, msgspec.Meta(max_length=MAX_NAME_LENGTH)]
Text = Annotated[str, msgspec.Meta(max_length=MAX_TEXT_LENGTH)]

# Properties the REST spec types `integer` without `format: int64` (or arrays of them).
INT_KEYS = frozenset(
    {
        "current-schema-id",
        "current-version-id",
        "default-sort-order-id",
        "default-spec-id",
        "element-id",
        "equality-ids",
        "field-id",
        "fields",
        "format-version",
        "id",
        "identifier-field-ids",
        "key-id",
        "last-assigned-field-id",
        "last-assigned-partition-id",
        "last-column-id",
        "last-partition-id",
        "min-snapshots-to-keep",
        "order-id",
        "projected-field-ids",
        "schema-id",
        "schema-ids",
        "sort-order-id",
        "source-id",
        "source-ids",
        "spec-id",
        "spec-ids",
        "value-id",
        "version-id",
        "view-version-id",
    }
)
# Properties the REST spec types `integer` with `format: int64`: checked for floats too (2e19 would pass as an int).
LONG_KEYS = frozenset(
    {
        "added-rows",
        "current-snapshot-id",
        "end-snapshot-id",
        "file-size-in-bytes",
        "first-row-id",
        "last-sequence-number",
        "last-updated-ms",
        "max-ref-age-ms",
        "max-snapshot-age-ms",
        "next-row-id",
        "parent-snapshot-id",
        "record-count",
        "sequence-number",
        "snapshot-id",
        "snapshot-ids",
        "start-snapshot-id",
        "timestamp-ms",
    }
)


class BodyLimitError(ValueError):
    """A request body outside the limits above; the message says which and where."""


def _check_number(value: object, bounds: tuple[int, int], key: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return  # not a number: the typed decoding behind this check answers for the type
    low, high = bounds
    if not low <= value <= high:
        kind = "int (32-bit)" if bounds == INT_RANGE else "long (64-bit)"
        raise BodyLimitError(f"{key or 'A value'}: {value!r} is out of range for an Iceberg {kind}")


def check_body(document: Any) -> None:
    """Walk a decoded JSON body once (iteratively: its depth is what is being checked).

    Raises:
        BodyLimitError: the body nests deeper than `MAX_JSON_DEPTH` or holds a number out of range.
    """
    stack: list[tuple[Any, int, str]] = [(document, 1, "")]
    while stack:
        node, depth, key = stack.pop()
        if isinstance(node, dict):
            if depth > MAX_JSON_DEPTH:
                raise BodyLimitError(f"The body nests deeper than {MAX_JSON_DEPTH} levels")
            for name, value in node.items():
                bounds = INT_RANGE if name in INT_KEYS else LONG_RANGE if name in LONG_KEYS else None
                if bounds is not None:
                    for item in value if isinstance(value, list) else (value,):
                        _check_number(item, bounds, name)
                if isinstance(value, dict | list | int):
                    stack.append((value, depth + 1, name))
        elif isinstance(node, list):
            if depth > MAX_JSON_DEPTH:
                raise BodyLimitError(f"The body nests deeper than {MAX_JSON_DEPTH} levels")
            stack.extend((item, depth + 1, key) for item in node if isinstance(item, dict | list | int))
        else:
            _check_number(node, LONG_RANGE, key)
