"""Snapshots written directly with pyiceberg's manifest writers: position deletes and many-manifest tables."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
    ManifestWriterV2,
    write_manifest,
    write_manifest_list,
)
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.update import AddSnapshotUpdate, SetSnapshotRefUpdate
from pyiceberg.typedef import Record

# The reserved field ids of a position delete file (spec: `file_path`, `pos`).
POSITION_DELETE_SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": "2147483546"}),
        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "2147483545"}),
    ]
)


class _DeleteManifestWriter(ManifestWriterV2):
    """pyiceberg 0.12 writes data manifests only; a delete manifest differs in its content and its metadata."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


def position_delete_file(table: Table, data_file: str, positions: Sequence[int]) -> DataFile:
    """Write a position delete file for rows `positions` of `data_file` (unpartitioned tables)."""
    path = f"{table.location()}/data/deletes-{uuid.uuid4()}.parquet"
    rows = pa.table({"file_path": [data_file] * len(positions), "pos": list(positions)}, schema=POSITION_DELETE_SCHEMA)
    with table.io.new_output(path).create() as stream:
        pq.write_table(rows, stream)
    return DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        record_count=len(positions),
        file_size_in_bytes=len(table.io.new_input(path)),
        _table_format_version=table.format_version,
    )


def commit_manifests(
    table: Table,
    data_manifests: list[ManifestFile],
    delete_files: Sequence[DataFile] = (),
    *,
    snapshot_id: int | None = None,
) -> None:
    """A new snapshot of the table's current manifests plus `data_manifests` and a delete manifest of
    `delete_files`, committed through the catalog (an `overwrite` when it deletes, else an `append`)."""
    metadata = table.metadata
    parent = metadata.current_snapshot()
    snapshot_id = snapshot_id if snapshot_id is not None else new_snapshot_id()
    sequence_number = metadata.next_sequence_number()
    manifests = [*(parent.manifests(table.io) if parent else []), *data_manifests]
    if delete_files:
        with _DeleteManifestWriter(
            metadata.spec(), metadata.schema(), table.io.new_output(_manifest_path(table)), snapshot_id, "deflate"
        ) as writer:
            for delete_file in delete_files:
                delete_file.spec_id = metadata.default_spec_id
                writer.add(
                    ManifestEntry.from_args(
                        status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id, data_file=delete_file
                    )
                )
        manifests.append(writer.to_manifest_file())
    list_path = f"{table.location()}/metadata/snap-{snapshot_id}-{uuid.uuid4()}.avro"
    with write_manifest_list(
        2,
        table.io.new_output(list_path),
        snapshot_id,
        parent.snapshot_id if parent else None,
        sequence_number,
        "deflate",
    ) as manifest_list:
        manifest_list.add_manifests(manifests)
    operation = Operation.OVERWRITE if delete_files else Operation.APPEND
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        parent_snapshot_id=parent.snapshot_id if parent else None,
        sequence_number=sequence_number,
        timestamp_ms=max(metadata.last_updated_ms + 1, _now_ms()),
        manifest_list=list_path,
        summary=Summary(operation=operation),
        schema_id=metadata.current_schema_id,
    )
    with table.transaction() as transaction:
        transaction._apply(
            (
                AddSnapshotUpdate(snapshot=snapshot),
                SetSnapshotRefUpdate(
                    snapshot_id=snapshot_id,
                    parent_snapshot_id=snapshot.parent_snapshot_id,
                    ref_name="main",
                    type="branch",
                ),
            )
        )


def data_manifest(table: Table, snapshot_id: int, files: Sequence[DataFile]) -> ManifestFile:
    """One data manifest of `files` (ADDED by `snapshot_id`)."""
    metadata = table.metadata
    with write_manifest(
        2, metadata.spec(), metadata.schema(), table.io.new_output(_manifest_path(table)), snapshot_id, "deflate"
    ) as writer:
        for data_file in files:
            writer.add(
                ManifestEntry.from_args(status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id, data_file=data_file)
            )
    return writer.to_manifest_file()


def synthetic_data_file(
    path: str, partition: Record, record_count: int, bounds: dict[int, tuple[bytes, bytes]]
) -> DataFile:
    """A data file's manifest entry without the file (for planning benchmarks: planning never opens data files)."""
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=record_count,
        file_size_in_bytes=record_count * 16,
        value_counts=dict.fromkeys(bounds, record_count),
        null_value_counts=dict.fromkeys(bounds, 0),
        lower_bounds={field_id: low for field_id, (low, _) in bounds.items()},
        upper_bounds={field_id: high for field_id, (_, high) in bounds.items()},
    )


def _manifest_path(table: Table) -> str:
    return f"{table.location()}/metadata/{uuid.uuid4()}-m0.avro"


def new_snapshot_id() -> int:
    return uuid.uuid4().int & ((1 << 63) - 1)


def _now_ms() -> int:
    return int(time.time() * 1000)
