"""The clock of a commit that moves `main` to an existing snapshot: the commit's injected one, not the wall clock.

pyiceberg stamps `last-updated-ms` and the new snapshot-log entry with `datetime.now()` when `main` is set to a
snapshot the commit did not add (a rollback, a cherry-pick). A commit event records the changes, not the
document, so replaying them must give the same document: the stamp comes from the commit's own clock instead.
"""

from __future__ import annotations

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.table.snapshots import SnapshotLogEntry
from pyiceberg.table.update import SetSnapshotRefUpdate

from catalog_es.metadata.ids import assigned_ids
from catalog_es.metadata.pyiceberg_compat import UpdateContext, UpdateRule, pyiceberg_rule


class ClockedUpdateContext(UpdateContext):
    """pyiceberg's update context of one commit, with the time the commit is applied at."""

    def __init__(self, now_ms: int) -> None:
        super().__init__()
        self.now_ms = now_ms

    def assigned_ids(self) -> dict[str, int]:
        """The schema, spec and sort-order ids the catalog chose in this commit (the last of each kind)."""
        return assigned_ids(self)


_pyiceberg_set_ref = pyiceberg_rule(SetSnapshotRefUpdate)


def set_snapshot_ref(update: SetSnapshotRefUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    reads_wall_clock = update.ref_name == MAIN_BRANCH and not context.is_added_snapshot(update.snapshot_id)
    updated = _pyiceberg_set_ref(update, base, context)
    if updated is base or not reads_wall_clock or not isinstance(context, ClockedUpdateContext):
        return updated
    entry = SnapshotLogEntry.model_validate({"snapshot-id": update.snapshot_id, "timestamp-ms": context.now_ms})
    log = [*updated.snapshot_log[:-1], entry]  # pyiceberg appended the entry last, stamped with its clock
    return updated.model_copy(update={"last_updated_ms": context.now_ms, "snapshot_log": log})


REF_CLOCK_RULES: dict[type, UpdateRule] = {SetSnapshotRefUpdate: set_snapshot_ref}
