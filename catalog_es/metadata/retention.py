"""Which previous metadata files a commit lets go of: Iceberg's `write.metadata.delete-after-commit.enabled`.

Iceberg (Java `TableOperations` / `BaseMetastoreTableOperations.deleteRemovedMetadataFiles`): the metadata log keeps
at most `write.metadata.previous-versions-max` entries (default 100; pyiceberg trims it on every commit), and when
`write.metadata.delete-after-commit.enabled` is true (default false) the files a commit drops from the log are
deleted. The catalog keeps Iceberg's defaults: a table keeps every metadata file unless its owner asks otherwise.
"""

from __future__ import annotations

from pyiceberg.table.metadata import TableMetadata

DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"
PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"


def removed_metadata_files(base: TableMetadata, updated: TableMetadata) -> list[str]:
    """The previous metadata files `updated` no longer logs, when its table deletes them after a commit; else none.

    Only files of `base`'s log: the file `base` itself was read from is logged by `updated` (Java's rule too).
    """
    if updated.properties.get(DELETE_AFTER_COMMIT, "false").strip().lower() != "true":
        return []
    kept = {entry.metadata_file for entry in updated.metadata_log}
    return [entry.metadata_file for entry in base.metadata_log if entry.metadata_file not in kept]
