"""Manifest-list records encoded once: a hot table's next list repeats the head's records byte for byte.

A rebased list is the client's new manifests plus the head's list, so on a hot table every rebase writes again
almost every record the previous one wrote, and pyiceberg's pure-Python Avro writer spends most of a rebase
encoding them. A record's bytes depend only on its values and the list's format version, so they are kept by those and
the block is assembled from them; framing, compression and the header stay pyiceberg's choices.

The key is the record's scalar values (path, length, spec, content, sequence numbers, the adding snapshot,
file and row counts, v3's first row id), not its partition summaries and key metadata: those are read from the
manifest file at that path and length, which never changes. A record the server has not written before (a
client's new manifest) carries the commit's own, new sequence number, so it never matches another's entry.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Hashable, Iterator
from typing import Any

from cachetools import LRUCache
from pyiceberg.avro.encoder import BinaryEncoder
from pyiceberg.avro.file import AvroOutputFile
from pyiceberg.manifest import ManifestFile, ManifestListWriter
from pyiceberg.typedef import Record


class EncodedManifestRecords:
    """A bounded LRU of encoded manifest-list records by format version and every value of the record."""

    def __init__(self, capacity: int) -> None:
        self._encoded: LRUCache[Hashable, bytes] = LRUCache(capacity)
        self._lock = threading.Lock()
        self.hits = 0

    def add_manifests(self, writer: ManifestListWriter, format_version: int, manifests: list[ManifestFile]) -> None:
        """What `writer.add_manifests` does (each manifest prepared by the writer, one block), from cached bytes."""
        prepared = [writer.prepare_manifest(manifest) for manifest in manifests]
        # The open Avro file the writer owns; pyiceberg has no accessor for it.
        out: AvroOutputFile[ManifestFile] = writer._writer
        content = b"".join(self._record(out, format_version, manifest) for manifest in prepared)
        out.encoder.write_int(len(prepared))
        codec = out.compression_codec()
        if codec is not None:
            compressed, length = codec.compress(content)
            out.encoder.write_int(length)
            out.encoder.write(compressed)
        else:
            out.encoder.write_int(len(content))
            out.encoder.write(content)
        out.encoder.write(out.sync_bytes)

    def _record(self, out: AvroOutputFile[ManifestFile], format_version: int, manifest: ManifestFile) -> bytes:
        key = (format_version, *_scalars(manifest))
        with self._lock:
            found = self._encoded.get(key)
            if found is not None:
                self.hits += 1
                return found
        buffer = io.BytesIO()
        out.writer.write(BinaryEncoder(buffer), manifest)
        encoded = buffer.getvalue()
        with self._lock:
            self._encoded[key] = encoded
        return encoded


# Positions of a manifest-list record's partition summaries and key metadata (pyiceberg's schema order).
_DERIVED = {13, 14}


def _scalars(record: Record) -> Iterator[Any]:
    return (record[position] for position in range(len(record)) if position not in _DERIVED)
