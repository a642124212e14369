"""A table or view commit recorded as a change: the digest of a metadata document, its replay from the previous one."""

from __future__ import annotations

import hashlib

import msgspec
from pyiceberg.table.metadata import TableMetadata

from catalog_es.events import Json
from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.tables import applied
from catalog_es.metadata.views import commit_view, parse_view_metadata, view_metadata_to_json


class MetadataDigestMismatchError(Exception):
    """A replayed metadata document is not the one the commit produced: the log no longer rebuilds it."""


def encode_metadata(document: Json) -> bytes:
    """The document's canonical JSON (keys sorted at every level): a commit encodes its document once, and these
    bytes are its metadata file, the read model's copy and what its digest is of."""
    return msgspec.json.encode(document, order="sorted")


def digest_of(encoded: bytes) -> str:
    """The digest of a document given as its canonical JSON (`encode_metadata`)."""
    return hashlib.sha256(encoded).hexdigest()


def metadata_digest(document: Json) -> str:
    """sha256 of the document's canonical JSON (keys sorted at every level, so stored key order does not matter)."""
    return digest_of(encode_metadata(document))


def check_digest(document: Json, expected: str | None, where: str) -> None:
    """Raises: MetadataDigestMismatchError when `expected` is given and the document does not have it."""
    if expected is not None:
        check_encoded_digest(encode_metadata(document), expected, where)


def check_encoded_digest(encoded: bytes, expected: str | None, where: str) -> None:
    """`check_digest` of a document given as its canonical JSON (`encode_metadata`'s bytes).

    Raises:
        MetadataDigestMismatchError: `expected` is given and the document does not have it.
    """
    if expected is not None and (actual := digest_of(encoded)) != expected:
        raise MetadataDigestMismatchError(
            f"{where}: replayed metadata has digest {actual}, the commit recorded {expected}"
        )


def records_whole_document(base: TableMetadata, updated: TableMetadata) -> bool:
    """Whether a commit's event records its whole resulting document, deliberately: when the table moved or its
    format version changed, so that replay never has to carry a document across a change of that size."""
    return updated.location != base.location or updated.format_version != base.format_version


def replay_commit(
    base: TableMetadata, base_document: Json, base_location: str, updates: list[Json], applied_at_ms: int
) -> tuple[TableMetadata, Json]:
    """The metadata (parsed and as a document) that applying `updates` to `base` at `applied_at_ms` produced.

    The same pyiceberg functions as the commit, the same clock value: the same document.

    Raises:
        BadRequestError: an update cannot be applied (the log and the code disagree).
    """
    updated = applied(base, base_location, updates, now_ms=applied_at_ms).metadata
    return updated, document_after(base, base_document, updated)


def replay_view_commit(base_document: Json, updates: list[Json], applied_at_ms: int) -> Json:
    """The view document that applying `updates` to `base_document` at `applied_at_ms` produced.

    Raises:
        BadRequestError: an update cannot be applied (the log and the code disagree).
    """
    updated = commit_view(parse_view_metadata(base_document), [], updates, now_ms=applied_at_ms)
    return view_metadata_to_json(updated)
