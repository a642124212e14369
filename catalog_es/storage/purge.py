"""What a purge may delete: the files a table's metadata chain references, and directories left empty."""

from __future__ import annotations

import os
from collections.abc import Callable

from pyiceberg.io import FileIO
from pyiceberg.manifest import ManifestFile
from pyiceberg.table.snapshots import Snapshot

from catalog_es.events import Json
from catalog_es.metadata.tables import parse_metadata

# Below a table: the catalog's own copies of its files for read policies (catalog_es.planning.policy_files),
# never in a snapshot, deleted with the table.
POLICY_FILES_DIR = "policy-files"


def referenced_files(io: FileIO, metadata_location: str, document: Json, inside: Callable[[str], bool]) -> list[str]:
    """Every file the metadata references that `inside` accepts: data and delete files, manifests, manifest
    lists, statistics, then the metadata files (current last), as pyiceberg's `purge_table` collects them.

    Only manifest lists and manifests that `inside` accepts are read, so a hostile metadata document cannot
    make the catalog read (or delete) files elsewhere. Unreadable ones are skipped (best effort).
    """
    metadata = parse_metadata(document)
    manifest_lists = [snapshot.manifest_list for snapshot in metadata.snapshots if inside(snapshot.manifest_list)]
    manifests: dict[str, ManifestFile] = {}
    for snapshot in metadata.snapshots:
        if inside(snapshot.manifest_list):
            manifests.update((manifest.manifest_path, manifest) for manifest in _manifests(io, snapshot))
    data_files = {
        path for manifest in manifests.values() if inside(manifest.manifest_path) for path in _entries(io, manifest)
    }
    statistics = [item.statistics_path for item in [*metadata.statistics, *metadata.partition_statistics]]
    previous = [entry.metadata_file for entry in metadata.metadata_log]
    candidates = [*sorted(data_files), *manifests, *manifest_lists, *statistics, *previous, metadata_location]
    return [path for path in dict.fromkeys(candidates) if inside(path)]


def _manifests(io: FileIO, snapshot: Snapshot) -> list[ManifestFile]:
    try:
        return list(snapshot.manifests(io))
    except Exception:  # a missing or corrupt manifest list: nothing to collect from it
        return []


def _entries(io: FileIO, manifest: ManifestFile) -> list[str]:
    try:
        return [entry.data_file.file_path for entry in manifest.fetch_manifest_entry(io, discard_deleted=False)]
    except Exception:  # as above, for a manifest
        return []


def checksum_sidecar(path: str) -> str:
    """The checksum file Hadoop's local filesystem writes beside a file (`dir/.name.crc`), as Spark leaves them."""
    directory, _, name = path.rpartition("/")
    return f"{directory}/.{name}.crc" if directory else f".{name}.crc"


def unreferenced(files: list[str], references: list[str], root: str) -> list[str]:
    """Those of `files` (relative to `root`) that no reference (a location below `root`) names, nor names as
    the file a checksum sidecar belongs to."""
    prefix = f"{root}/"
    named = {path.removeprefix(prefix) for path in references if path.startswith(prefix)}
    named |= {checksum_sidecar(path) for path in named}
    return sorted(path for path in files if path not in named)


def remove_empty_directories(root: str) -> None:
    """Remove directories at and below `root` that hold nothing (deepest first); never a file, never a link."""
    if not os.path.isdir(root) or os.path.islink(root):
        return
    for directory, _, _ in os.walk(root, topdown=False):
        try:
            os.rmdir(directory)  # fails on a non-empty directory, which then stays
        except OSError:
            continue
