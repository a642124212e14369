"""The IO of a server-side rebase: manifest lists and manifests read, new manifest lists written (blocking).

All through the warehouse's storage, so every file read or written is confined to the warehouse; the
Avro is pyiceberg's (its manifest-list reader and writer, its manifest entry reader), with the v3 manifest
lists of `catalog_es.storage.manifest_lists`.
"""

from __future__ import annotations

import threading
import uuid
from contextlib import suppress
from dataclasses import dataclass

import structlog
from cachetools import LRUCache
from pyiceberg.manifest import DataFileContent, ManifestContent, ManifestEntry, ManifestEntryStatus, ManifestFile
from pyiceberg.table import TableProperties
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.typedef import TableVersion

from catalog_es.events import Json
from catalog_es.metadata.pyiceberg_compat import manifest_list_file_name
from catalog_es.metadata.rebase import (
    AssignedRows,
    PartitionKey,
    RebasePlan,
    as_written,
    conflicting,
    rebased_manifests,
    rebased_snapshot,
    rebased_updates,
    touched_partitions,
)
from catalog_es.metadata.row_lineage import next_row_id
from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.manifest_list_records import EncodedManifestRecords
from catalog_es.storage.manifest_lists import (
    ManifestListWriterV3,
    read_manifest_list,
    read_schema_version,
    write_manifest_list,
)


class _ManifestLists:
    """Parsed manifest lists by storage, location and read schema, the most recent few.

    A manifest list is written once and never changed, and on a hot table the head's list is the one the
    previous rebase wrote and the next client's base: reading it again would be most of a rebase's IO. The
    read schema is part of the key: a list read as v2 has lost the `first_row_id`s a v3 rebase must keep.
    """

    def __init__(self, size: int) -> None:
        self._lists: LRUCache[tuple[WarehouseStorage, str, TableVersion], list[ManifestFile]] = LRUCache(size)
        self._lock = threading.Lock()

    def read(self, storage: WarehouseStorage, location: str, format_version: int) -> list[ManifestFile]:
        io = storage.file_io(location)  # confined to the warehouse, cached or not
        key = (storage, location, read_schema_version(format_version))
        with self._lock:
            found = self._lists.get(key)
            if found is not None:
                return found
        manifests = read_manifest_list(io.new_input(location), format_version)
        self.keep(storage, location, format_version, manifests)
        return manifests

    def keep(
        self, storage: WarehouseStorage, location: str, format_version: int, manifests: list[ManifestFile]
    ) -> None:
        with self._lock:
            self._lists[(storage, location, read_schema_version(format_version))] = manifests


_LISTS = _ManifestLists(size=64)
_RECORDS = EncodedManifestRecords(capacity=200_000)  # about 200 bytes each: tens of MB at most
_log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class RebasedCommit:
    """The commit to make instead of the client's, and the manifest lists written for it."""

    requirements: list[Json]
    updates: list[Json]
    manifest_lists: list[str]


def rebase_commit(
    storage: WarehouseStorage,
    current: TableMetadata,
    plan: RebasePlan,
    commit_uuid: uuid.UUID,
    attempt: int,
    now_ms: int,
) -> RebasedCommit | None:
    """Write the rebased manifest lists and return the commit naming them; None when the commit conflicts.

    A manifest file or list that cannot be read (outside the warehouse, missing, not Avro) also answers None:
    the commit then gets the 409 it got before rebasing existed, never an error of the server's making.

    Raises:
        StorageAccessError, OSError: a new manifest list could not be written (nothing is left behind).
    """
    try:
        lists = _rebased_lists(storage, current, plan)
    except Exception:  # whatever a client-named file makes pyiceberg raise (even SystemError), the commit stays a 409
        _log.info("rebase_unreadable_manifests", exc_info=True)
        return None
    if lists is None:
        return None
    provider = load_location_provider(current.location, current.properties)
    compression = current.properties.get(
        TableProperties.WRITE_AVRO_COMPRESSION, TableProperties.WRITE_AVRO_COMPRESSION_DEFAULT
    )
    written: list[str] = []
    rebased: list[Snapshot] = []
    parent, sequence_number, row_id = plan.head, current.next_sequence_number(), next_row_id(current)
    try:
        for snapshot, manifests in zip(plan.snapshots, lists, strict=True):
            name = manifest_list_file_name(snapshot.snapshot_id, attempt, commit_uuid)
            location = provider.new_metadata_location(name)
            output = storage.file_io(location).new_output(location)
            written.append(location)
            with write_manifest_list(
                format_version=current.format_version,
                output_file=output,
                snapshot_id=snapshot.snapshot_id,
                parent_snapshot_id=parent.snapshot_id,
                sequence_number=sequence_number,
                first_row_id=row_id,
                avro_compression=compression,  # type: ignore[arg-type] # a table property, as pyiceberg reads it
            ) as writer:
                _RECORDS.add_manifests(writer, current.format_version, manifests)
            rows = None
            if isinstance(writer, ManifestListWriterV3):
                rows = AssignedRows(first_row_id=writer.first_row_id, added_rows=writer.assigned_rows)
                row_id = writer.next_row_id
                _LISTS.keep(storage, location, current.format_version, writer.written)
            else:
                _LISTS.keep(storage, location, current.format_version, as_written(manifests, sequence_number))
            parent = rebased_snapshot(snapshot, parent, sequence_number, location, now_ms, rows)
            rebased.append(parent)
            if current.format_version > 1:
                sequence_number += 1
    except BaseException:
        delete_manifest_lists(storage, written)
        raise
    return RebasedCommit(requirements=plan.requirements, updates=rebased_updates(plan, rebased), manifest_lists=written)


def _rebased_lists(
    storage: WarehouseStorage, current: TableMetadata, plan: RebasePlan
) -> list[list[ManifestFile]] | None:
    """The manifests of each rebased list, from the client's, its base's and the head's lists; None: a conflict."""
    base = current.snapshot_by_id(plan.original_base) if plan.original_base is not None else None
    version = current.format_version
    base_list = _manifest_list(storage, base.manifest_list, version) if base is not None else []
    client_lists = [_manifest_list(storage, snapshot.manifest_list, version) for snapshot in plan.snapshots]
    head_list = _manifest_list(storage, plan.head.manifest_list, version)
    lists = rebased_manifests(base_list, head_list, client_lists, plan.snapshots, current.default_spec_id)
    if lists is None:
        return None
    if plan.append_only:
        return None if _fills_a_partition_empty_at_base(storage, version, plan, client_lists, base_list) else lists
    return None if _overlaps(storage, version, plan, client_lists) else lists


def delete_manifest_lists(storage: WarehouseStorage, locations: list[str]) -> None:
    """Best effort: a list no commit names is only an orphan file inside the table's location."""
    for location in locations:
        with suppress(Exception):
            storage.delete_file(location)


def _manifest_list(storage: WarehouseStorage, location: str, format_version: int) -> list[ManifestFile]:
    return _LISTS.read(storage, location, format_version)


def _changed_entries(storage: WarehouseStorage, manifests: list[ManifestFile], snapshot_id: int) -> list[ManifestEntry]:
    """The files a snapshot added or removed, from the manifests it wrote."""
    entries: list[ManifestEntry] = []
    for manifest in manifests:
        if manifest.added_snapshot_id != snapshot_id:
            continue
        io = storage.file_io(manifest.manifest_path)
        entries += [
            entry
            for entry in manifest.fetch_manifest_entry(io, discard_deleted=False)
            if entry.snapshot_id == snapshot_id and entry.status != ManifestEntryStatus.EXISTING
        ]
    return entries


def _fills_a_partition_empty_at_base(
    storage: WarehouseStorage,
    format_version: int,
    plan: RebasePlan,
    client_lists: list[list[ManifestFile]],
    base_list: list[ManifestFile],
) -> bool:
    """Whether the appends add data to a partition that had none at their base and that a commit since filled.

    pyiceberg's `overwrite(df, filter)` is a delete by the filter and an append: when the delete matched
    nothing at the client's base, only the append reaches the catalog, indistinguishable from a fast append (so
    does Java's: an `OverwriteFiles` that deletes nothing reports `append`).
    Its retry would delete what a concurrent commit added under the filter, so such an append keeps its 409
    and the client's retry decides. For a partition filter, "matched nothing" means the partition was empty;
    a row filter that matched no row of a non-empty partition stays out of reach (commands/README.md says so).
    """
    appended = _client_partitions(storage, plan, client_lists)
    filled = touched_partitions(filter(_adds_data, _concurrent_entries(storage, format_version, plan)))
    at_risk = appended & filled
    return bool(at_risk) and not at_risk <= _live_partitions(storage, base_list, at_risk)


def _live_partitions(
    storage: WarehouseStorage, manifests: list[ManifestFile], wanted: set[PartitionKey]
) -> set[PartitionKey]:
    """Those of `wanted` that hold a live data file in the list's manifests (reading no more than it must)."""
    found: set[PartitionKey] = set()
    spec_ids = {spec_id for spec_id, _ in wanted}
    for manifest in manifests:
        if found == wanted:
            break
        if manifest.content != ManifestContent.DATA or manifest.partition_spec_id not in spec_ids:
            continue
        if not (manifest.has_added_files() or manifest.has_existing_files()):
            continue
        io = storage.file_io(manifest.manifest_path)
        found |= wanted & touched_partitions(manifest.fetch_manifest_entry(io, discard_deleted=True))
    return found


def _overlaps(
    storage: WarehouseStorage, format_version: int, plan: RebasePlan, client_lists: list[list[ManifestFile]]
) -> bool:
    """Whether the client's overwrites or deletes conflict with the commits since its base (`conflicting`)."""
    client = _client_partitions(storage, plan, client_lists)
    entries = _concurrent_entries(storage, format_version, plan)
    added_data = any(map(_adds_data, entries))
    concurrent = touched_partitions(entries)
    return conflicting(client, concurrent, scoped=plan.scoped_to_partitions, concurrent_added_data=added_data)


def _client_partitions(
    storage: WarehouseStorage, plan: RebasePlan, client_lists: list[list[ManifestFile]]
) -> set[PartitionKey]:
    """The partitions the client's snapshots add or remove files in."""
    touched: set[PartitionKey] = set()
    for snapshot, manifests in zip(plan.snapshots, client_lists, strict=True):
        touched |= touched_partitions(_changed_entries(storage, manifests, snapshot.snapshot_id))
    return touched


def _concurrent_entries(storage: WarehouseStorage, format_version: int, plan: RebasePlan) -> list[ManifestEntry]:
    """The files the commits since the client's base added or removed."""
    entries: list[ManifestEntry] = []
    for snapshot in plan.concurrent:
        manifests = _manifest_list(storage, snapshot.manifest_list, format_version)
        entries += _changed_entries(storage, manifests, snapshot.snapshot_id)
    return entries


def _adds_data(entry: ManifestEntry) -> bool:
    return entry.status == ManifestEntryStatus.ADDED and entry.data_file.content == DataFileContent.DATA
