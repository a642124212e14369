"""Warehouse storage IO: metadata files, emptiness checks and purges (blocking; run off the event loop)."""

from __future__ import annotations

import msgspec
import pyarrow.fs as pafs
from pyiceberg.io import load_file_io
from pyiceberg.serializers import Compressor

from catalog_es.events import Json
from catalog_es.locations import normalize_location


def _filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    filesystem, path = pafs.FileSystem.from_uri(normalize_location(location))
    return filesystem, path


class WarehouseStorage:
    """Reads and writes a warehouse's files through pyiceberg's FileIO and pyarrow filesystems."""

    def __init__(self, properties: dict[str, str] | None = None) -> None:
        self._properties = dict(properties or {})

    def write_metadata(self, location: str, document: Json) -> None:
        """Write a new metadata file; never overwrites (a name is used once)."""
        output = load_file_io(self._properties, location).new_output(location)
        with output.create(overwrite=False) as stream:
            stream.write(Compressor.get_compressor(location).bytes_compressor()(msgspec.json.encode(document)))

    def read_metadata(self, location: str) -> Json:
        """The metadata document as stored (gzip-compressed files too)."""
        io = load_file_io(self._properties, location)
        with io.new_input(location).open() as stream:
            document: Json = msgspec.json.decode(Compressor.get_compressor(location).stream_decompressor(stream).read())
        return document

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
