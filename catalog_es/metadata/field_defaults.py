"""Column defaults (spec v3 `initial-default`, `write-default`) carried across the fresh ids of a new table.

pyiceberg 0.12 rebuilds every field when it assigns fresh ids and leaves the defaults behind; Iceberg
Java's `AssignFreshIds` keeps them. The fresh schema has the client's shape, so fields pair by position.
"""

from __future__ import annotations

from pyiceberg.schema import Schema
from pyiceberg.types import IcebergType, ListType, MapType, NestedField, StructType


def with_field_defaults(fresh: Schema, original: Schema) -> Schema:
    """`fresh` (the same shape as `original`, new ids) with `original`'s column defaults."""
    return Schema(
        *_fields(fresh.fields, original.fields),
        schema_id=fresh.schema_id,
        identifier_field_ids=fresh.identifier_field_ids,
    )


def _fields(fresh: tuple[NestedField, ...], original: tuple[NestedField, ...]) -> list[NestedField]:
    return [
        NestedField(
            field_id=new.field_id,
            name=new.name,
            field_type=_type(new.field_type, old.field_type),
            required=new.required,
            doc=new.doc,
            initial_default=old.initial_default,
            write_default=old.write_default,
        )
        for new, old in zip(fresh, original, strict=True)
    ]


def _type(fresh: IcebergType, original: IcebergType) -> IcebergType:
    if isinstance(fresh, StructType) and isinstance(original, StructType):
        return StructType(*_fields(fresh.fields, original.fields))
    if isinstance(fresh, ListType) and isinstance(original, ListType):
        return ListType(
            element_id=fresh.element_id,
            element=_type(fresh.element_type, original.element_type),
            element_required=fresh.element_required,
        )
    if isinstance(fresh, MapType) and isinstance(original, MapType):
        return MapType(
            key_id=fresh.key_id,
            key_type=_type(fresh.key_type, original.key_type),
            value_id=fresh.value_id,
            value_type=_type(fresh.value_type, original.value_type),
            value_required=fresh.value_required,
        )
    return fresh
