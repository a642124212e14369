"""The `first_row_id` of a manifest-list entry (format v3, field 520), which pyiceberg 0.12's ManifestFile lacks.

pyiceberg's `ManifestFile` is a positional record; read with the v3 schema (`MANIFEST_LIST_FILE_SCHEMAS[3]`) it
carries one more value than with the v2 schema it reads by default, at the position of field 520. Entries read
with a v1/v2 schema have no such value: their row ids are unassigned, as the spec says of pre-v3 manifests.
"""

from __future__ import annotations

from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS, ManifestFile

FIRST_ROW_ID_FIELD_ID = 520
_V3_FIELDS = MANIFEST_LIST_FILE_SCHEMAS[3].fields
# The v3 schema is the v2 one plus field 520 at its end, so a v2-read entry is a v3 entry's prefix.
FIRST_ROW_ID_POSITION = next(i for i, field in enumerate(_V3_FIELDS) if field.field_id == FIRST_ROW_ID_FIELD_ID)


def first_row_id(manifest: ManifestFile) -> int | None:
    """The manifest's first row id; None when it has none yet (or was read with a pre-v3 schema)."""
    if len(manifest) <= FIRST_ROW_ID_POSITION:
        return None
    value: int | None = manifest[FIRST_ROW_ID_POSITION]
    return value


def has_row_id_field(manifest: ManifestFile) -> bool:
    """Whether the entry was read (or made) with the v3 schema, so its row ids are part of what it says."""
    return len(manifest) > FIRST_ROW_ID_POSITION


def with_first_row_id(manifest: ManifestFile, row_id: int | None) -> ManifestFile:
    """A new v3-wide entry: the manifest's v1/v2 fields and `row_id` (the given record is left alone)."""
    values = [manifest[position] for position in range(FIRST_ROW_ID_POSITION)]
    return ManifestFile(*values, row_id)
