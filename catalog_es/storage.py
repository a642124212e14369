"""Warehouse storage IO: metadata files, emptiness checks and purges (blocking; run off the event loop)."""

from __future__ import annotations

import pyarrow.fs as pafs
from pyiceberg.io import load_file_io
from pyiceberg.serializers import FromInputFile, ToOutputFile
from pyiceberg.table.metadata import TableMetadata

from catalog_es.locations import normalize_location


def _filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    filesystem, path = pafs.FileSystem.from_uri(normalize_location(location))
    return filesystem, path


class WarehouseStorage:
    """Reads and writes a warehouse's files through pyiceberg's FileIO and pyarrow filesystems."""

    def __init__(self, properties: dict[str, str] | None = None) -> None:
        self._properties = dict(properties or {})

    def write_metadata(self, location: str, metadata: TableMetadata) -> None:
        io = load_file_io(self._properties, location)
        ToOutputFile.table_metadata(metadata, io.new_output(location), overwrite=False)

    def read_metadata(self, location: str) -> TableMetadata:
        io = load_file_io(self._properties, location)
        return FromInputFile.table_metadata(io.new_input(location))

    def delete_file(self, location: str) -> None:
        load_file_io(self._properties, location).delete(location)

    def is_empty(self, location: str) -> bool:
        """Whether nothing is stored at or below the location."""
        filesystem, path = _filesystem(location)
        info = filesystem.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return True
        if info.type == pafs.FileType.File:
            return False
        return not filesystem.get_file_info(pafs.FileSelector(path, recursive=True))

    def purge(self, location: str) -> None:
        """Delete everything at and below the location."""
        filesystem, path = _filesystem(location)
        if filesystem.get_file_info(path).type != pafs.FileType.NotFound:
            filesystem.delete_dir(path)
