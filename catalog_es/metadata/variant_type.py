"""The format-version 3 `variant` type, which pyiceberg 0.12 cannot parse, for schemas the catalog only stores.

pyiceberg's field validator turns type strings into its own classes and refuses any it does not know;
an already-built type object passes through untouched. So the schema documents are walked before
they are validated and each `variant` becomes a `VariantType`, which serialises back to `variant`.
The catalog never reads variant data, it only keeps the type in metadata.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from pyiceberg.typedef import TableVersion
from pyiceberg.types import PrimitiveType

_VARIANT: Literal["variant"] = "variant"


class VariantType(PrimitiveType):
    """Semi-structured data (spec: `variant`, format version 3 and later)."""

    root: Literal["variant"] = Field(default=_VARIANT)

    def minimum_format_version(self) -> TableVersion:
        return 3


def with_variant_types(schema: Any) -> Any:
    """The schema (or type) document with every `variant` type as a `VariantType` object.

    Anything that is not a type document is returned as it is, for pyiceberg's validation to judge.
    """
    if schema == _VARIANT:
        return VariantType()
    if not isinstance(schema, dict):
        return schema
    match schema.get("type"):
        case "struct" if isinstance(schema.get("fields"), list):
            fields = [_field(field) for field in schema["fields"]]
            return {**schema, "fields": fields}
        case "list" if "element" in schema:
            return {**schema, "element": with_variant_types(schema["element"])}
        case "map" if "key" in schema and "value" in schema:
            key, value = with_variant_types(schema["key"]), with_variant_types(schema["value"])
            return {**schema, "key": key, "value": value}
    return schema


def _field(field: Any) -> Any:
    if isinstance(field, dict) and "type" in field:
        return {**field, "type": with_variant_types(field["type"])}
    return field
