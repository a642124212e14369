"""Manifest lists of every format version: read keeping v3's `first_row_id`, written with v3 row-id assignment.

pyiceberg 0.12 reads manifest lists with the v2 schema (dropping `first_row_id`, field 520) and its writer stops
at v2. For v3 this module reads with pyiceberg's `AvroFile` under its own v3 schema, and writes with a small
`ManifestListWriterV2` subclass that does what Iceberg's Java `ManifestListWriter.V3Writer` does (spec "Row
Lineage"): the v3 header, sequence numbers as in v2, and a `first_row_id` for each data manifest without one.
"""

from __future__ import annotations

from typing import cast

from pyiceberg.avro.codecs import AVRO_CODEC_KEY, AvroCompressionCodec
from pyiceberg.avro.file import AvroFile, AvroOutputFile
from pyiceberg.io import InputFile, OutputFile
from pyiceberg.manifest import (
    MANIFEST_LIST_FILE_SCHEMAS,
    ManifestContent,
    ManifestFile,
    ManifestListWriter,
    ManifestListWriterV2,
    PartitionFieldSummary,
)
from pyiceberg.manifest import read_manifest_list as read_pre_v3_manifest_list
from pyiceberg.manifest import write_manifest_list as write_pre_v3_manifest_list
from pyiceberg.typedef import TableVersion

from catalog_es.metadata.manifest_row_ids import first_row_id, with_first_row_id

ROW_LINEAGE_FORMAT_VERSION: TableVersion = 3
_V3_SCHEMA = MANIFEST_LIST_FILE_SCHEMAS[3]


def read_schema_version(format_version: int) -> TableVersion:
    """The schema a table's manifest lists are read with: v3 keeps `first_row_id`, older tables read as v2
    (pyiceberg's default, which also reads v1 lists)."""
    return 3 if format_version >= ROW_LINEAGE_FORMAT_VERSION else 2


def read_manifest_list(input_file: InputFile, format_version: int) -> list[ManifestFile]:
    """The manifests of a list, each with its `first_row_id` on a v3 table (null for lists written before v3)."""
    if read_schema_version(format_version) < ROW_LINEAGE_FORMAT_VERSION:
        return list(read_pre_v3_manifest_list(input_file))
    with AvroFile[ManifestFile](
        input_file,
        _V3_SCHEMA,
        read_types={-1: ManifestFile, 508: PartitionFieldSummary},
        read_enums={517: ManifestContent},
    ) as reader:
        return list(reader)


class ManifestListWriterV3(ManifestListWriterV2):
    """A v3 manifest list: pyiceberg's v2 sequence-number assignment, plus row ids assigned as Java's V3Writer.

    Each data manifest without a `first_row_id` (the commit's new manifests, and manifests from before the
    table was v3) gets the next row id, which then advances by the manifest's added and existing rows: space
    for every row it lists, as existing files of a pre-v3 manifest have no row ids of their own. Delete
    manifests have none. `assigned_rows` is the snapshot's `added-rows`.
    """

    def __init__(
        self,
        output_file: OutputFile,
        snapshot_id: int,
        parent_snapshot_id: int | None,
        sequence_number: int,
        first_row_id: int,
        compression: AvroCompressionCodec,
    ) -> None:
        super().__init__(output_file, snapshot_id, parent_snapshot_id, sequence_number, compression)
        self._format_version = ROW_LINEAGE_FORMAT_VERSION
        self._meta = {  # the header Java writes, in its order
            "snapshot-id": str(snapshot_id),
            "parent-snapshot-id": str(parent_snapshot_id) if parent_snapshot_id is not None else "null",
            "sequence-number": str(sequence_number),
            "first-row-id": str(first_row_id),
            "format-version": str(ROW_LINEAGE_FORMAT_VERSION),
            AVRO_CODEC_KEY: compression,
        }
        self.first_row_id = first_row_id
        self.next_row_id = first_row_id
        self.written: list[ManifestFile] = []

    def __enter__(self) -> ManifestListWriterV3:
        """Open the file; records are v3-wide (pyiceberg's base class would bind them to the v2 schema)."""
        self._writer = AvroOutputFile[ManifestFile](
            output_file=self._output_file,
            record_schema=_V3_SCHEMA,
            file_schema=_V3_SCHEMA,
            schema_name="manifest_file",
            metadata=self._meta,
        )
        self._writer.__enter__()
        return self

    @property
    def assigned_rows(self) -> int:
        return self.next_row_id - self.first_row_id

    def prepare_manifest(self, manifest_file: ManifestFile) -> ManifestFile:
        # A fresh v3-wide record first: pyiceberg's v2 step copies shallowly and would write into the caller's.
        prepared = super().prepare_manifest(with_first_row_id(manifest_file, first_row_id(manifest_file)))
        if prepared.content != ManifestContent.DATA:
            prepared = with_first_row_id(prepared, None)
        elif first_row_id(prepared) is None:
            added, existing = prepared.added_rows_count, prepared.existing_rows_count
            if added is None or existing is None:  # required in v2 and v3 manifest lists
                raise ValueError(f"Cannot assign row ids to {prepared.manifest_path}: its row counts are missing")
            prepared = with_first_row_id(prepared, self.next_row_id)
            self.next_row_id += added + existing
        self.written.append(prepared)
        return prepared


def write_manifest_list(
    format_version: int,
    output_file: OutputFile,
    snapshot_id: int,
    parent_snapshot_id: int | None,
    sequence_number: int,
    first_row_id: int | None,
    avro_compression: AvroCompressionCodec,
) -> ManifestListWriter:
    """pyiceberg's writer for v1/v2 tables, `ManifestListWriterV3` for v3 (which needs the snapshot's first row id)."""
    if format_version < ROW_LINEAGE_FORMAT_VERSION:
        version = cast("TableVersion", format_version)  # pyiceberg's writer refuses any but 1 and 2
        return write_pre_v3_manifest_list(
            version, output_file, snapshot_id, parent_snapshot_id, sequence_number, avro_compression
        )
    if first_row_id is None:
        raise ValueError("A format-version 3 manifest list needs the snapshot's first row id")
    return ManifestListWriterV3(
        output_file, snapshot_id, parent_snapshot_id, sequence_number, first_row_id, avro_compression
    )
