"""Data and delete files as the spec's ContentFile JSON: partition tuples and bounds as typed JSON values."""

from __future__ import annotations

import uuid
from typing import Any

from pyiceberg.conversions import from_bytes, to_json
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.typedef import Record
from pyiceberg.types import PrimitiveType, StructType, UUIDType

_CONTENT = {
    DataFileContent.DATA: "data",
    DataFileContent.POSITION_DELETES: "position-deletes",
    DataFileContent.EQUALITY_DELETES: "equality-deletes",
}


class ContentFiles:
    """Serializes one table's files: the partition types per spec and the column types, computed once."""

    def __init__(self, schema: Schema, specs: dict[int, PartitionSpec]) -> None:
        self._types = {field.field_id: field.field_type for field in schema._lazy_id_to_field.values()}
        self._partition_types: dict[int, StructType] = {}
        self._schema, self._specs = schema, specs

    def document(self, data_file: DataFile, *, stats: bool = True) -> dict[str, Any]:
        """The spec's DataFile / PositionDeleteFile / EqualityDeleteFile object for a manifest entry's file.

        Bounds and counts go with data files (`stats`), so engines can prune further; a bound whose type this
        pyiceberg cannot write as JSON is left out (bounds are optional: leaving one out only prunes less).
        """
        document: dict[str, Any] = {
            "content": _CONTENT[data_file.content],
            "file-path": data_file.file_path,
            "file-format": data_file.file_format.value.lower(),
            "spec-id": data_file.spec_id,
            "partition": self._partition(data_file.spec_id, data_file.partition),
            "file-size-in-bytes": data_file.file_size_in_bytes,
            "record-count": data_file.record_count,
        }
        if data_file.key_metadata:
            document["key-metadata"] = bytes(data_file.key_metadata).hex().upper()
        if data_file.split_offsets:
            document["split-offsets"] = list(data_file.split_offsets)
        if data_file.sort_order_id is not None:
            document["sort-order-id"] = data_file.sort_order_id
        if data_file.content == DataFileContent.EQUALITY_DELETES and data_file.equality_ids:
            document["equality-ids"] = list(data_file.equality_ids)
        if data_file.content == DataFileContent.DATA and stats:
            for key, counts in (
                ("column-sizes", data_file.column_sizes),
                ("value-counts", data_file.value_counts),
                ("null-value-counts", data_file.null_value_counts),
                ("nan-value-counts", data_file.nan_value_counts),
            ):
                if counts:
                    document[key] = {"keys": list(counts), "values": list(counts.values())}
            for key, bounds in (("lower-bounds", data_file.lower_bounds), ("upper-bounds", data_file.upper_bounds)):
                if bounds and (values := self._bounds(bounds)):
                    document[key] = values
        return document

    def _partition(self, spec_id: int, partition: Record) -> list[Any]:
        struct = self._partition_types.get(spec_id)
        if struct is None:
            struct = self._partition_types[spec_id] = self._specs[spec_id].partition_type(self._schema)
        return [
            None if value is None else _json_value(field.field_type, value)
            for position, field in enumerate(struct.fields)
            for value in (partition[position] if position < len(partition) else None,)
        ]

    def _bounds(self, bounds: dict[int, bytes]) -> dict[str, list[Any]] | None:
        keys: list[int] = []
        values: list[Any] = []
        for field_id, raw in bounds.items():
            field_type = self._types.get(field_id)
            if not isinstance(field_type, PrimitiveType):
                continue
            try:
                value = _json_value(field_type, from_bytes(field_type, raw))
            except (TypeError, ValueError, NotImplementedError):
                continue
            keys.append(field_id)
            values.append(value)
        return {"keys": keys, "values": values} if keys else None


def _json_value(field_type: Any, value: Any) -> Any:
    """A typed value in the spec's JSON form (binary and fixed: uppercase hex, as the spec says); a type this
    pyiceberg has no JSON form for (nanosecond timestamps) keeps its physical value."""
    if isinstance(field_type, UUIDType) and isinstance(value, bytes | bytearray):
        return str(uuid.UUID(bytes=bytes(value)))
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex().upper()
    try:
        return to_json(field_type, value)
    except (TypeError, ValueError, NotImplementedError):
        return value
