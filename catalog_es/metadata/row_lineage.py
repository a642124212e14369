"""Format-version 3 row lineage (`next-row-id`) and the upgrade to v3, on top of pyiceberg 0.12's updates.

pyiceberg 0.12 stops `upgrade-format-version` at 2, creates v3 metadata without `next-row-id` (which
the v3 spec requires: Java cannot load such a table), and drops `next-row-id` to null when a snapshot
lacks `added-rows`. Its own update functions still do the work; the rules here (`ROW_LINEAGE_RULES`, in the
catalog's `UpdateRules`) only fill those gaps.
"""

from __future__ import annotations

from typing import Any

from pyiceberg.table.metadata import TableMetadata, TableMetadataV3
from pyiceberg.table.update import AddSnapshotUpdate, UpgradeFormatVersionUpdate

from catalog_es.events import Json
from catalog_es.metadata.pyiceberg_compat import UpdateContext, UpdateRule, pyiceberg_rule

ROW_LINEAGE_FORMAT_VERSION = 3
LATEST_FORMAT_VERSION = 3
_INITIAL_ROW_ID = 0  # spec: next-row-id starts at 0 for a new v3 table and for one upgraded to v3

_pyiceberg_upgrade = pyiceberg_rule(UpgradeFormatVersionUpdate)
_pyiceberg_add_snapshot = pyiceberg_rule(AddSnapshotUpdate)


def next_row_id_of(document: Json) -> int:
    """The `next-row-id` of a stored v3 document, worked out from its snapshots when it lacks one.

    Metadata written before the catalog kept the field has none; no row id has been assigned above
    any snapshot's `first-row-id + added-rows`, so the highest of those is a correct next id.
    """
    stored = document.get("next-row-id")
    if isinstance(stored, int):
        return stored
    ends = [
        snapshot["first-row-id"] + snapshot["added-rows"]
        for snapshot in document.get("snapshots") or []
        if isinstance(snapshot.get("first-row-id"), int) and isinstance(snapshot.get("added-rows"), int)
    ]
    return max(ends, default=_INITIAL_ROW_ID)


def with_next_row_id(metadata: TableMetadata) -> TableMetadata:
    """v3 metadata with `next-row-id` set (0 for a table without lineage yet); other versions as they are."""
    if isinstance(metadata, TableMetadataV3) and metadata.next_row_id is None:
        return metadata.model_copy(update={"next_row_id": _INITIAL_ROW_ID})
    return metadata


def next_row_id(metadata: TableMetadata) -> int | None:
    """The first row id the next snapshot of a v3 table gets (0 before any lineage); None below v3."""
    with_lineage = with_next_row_id(metadata)
    return with_lineage.next_row_id if isinstance(with_lineage, TableMetadataV3) else None


def upgrade_format_version(
    update: UpgradeFormatVersionUpdate, base: TableMetadata, context: UpdateContext
) -> TableMetadata:
    if update.format_version > LATEST_FORMAT_VERSION:
        raise ValueError(f"Unsupported table format version: {update.format_version}")
    if update.format_version < ROW_LINEAGE_FORMAT_VERSION or base.format_version >= ROW_LINEAGE_FORMAT_VERSION:
        return _pyiceberg_upgrade(update, base, context)  # 1 → 2, no-ops and downgrades: pyiceberg's rules
    v2 = base
    if base.format_version < 2:  # v1's single schema and spec become lists the way pyiceberg does it
        v2 = _pyiceberg_upgrade(update.model_copy(update={"format_version": 2}), base, context)
    fields: dict[str, Any] = dict(v2)
    fields.update(format_version=ROW_LINEAGE_FORMAT_VERSION, next_row_id=_INITIAL_ROW_ID)
    context.add_update(update)
    return TableMetadataV3.model_construct(**fields)


def add_snapshot(update: AddSnapshotUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    if base.format_version < ROW_LINEAGE_FORMAT_VERSION:
        return _pyiceberg_add_snapshot(update, base, context)
    first_row_id, added_rows = update.snapshot.first_row_id, update.snapshot.added_rows
    if first_row_id is None or added_rows is None:
        raise ValueError("Cannot add a snapshot without first-row-id and added-rows to a format-version 3 table")
    # pyiceberg checks that first-row-id is not behind next-row-id, and adds the snapshot.
    updated = _pyiceberg_add_snapshot(update, with_next_row_id(base), context)
    # Spec: next-row-id stays above every assigned row id, so past this snapshot's range.
    return updated.model_copy(update={"next_row_id": first_row_id + added_rows})


ROW_LINEAGE_RULES: dict[type, UpdateRule] = {
    UpgradeFormatVersionUpdate: upgrade_format_version,
    AddSnapshotUpdate: add_snapshot,
}
