"""A table's maintenance health: the figures triggers read, folded from its commits (no storage is read).

Exact figures come from the table metadata each commit records: snapshot count, the oldest snapshot, and
the current snapshot's `total-*` summary. Small files are counted from each new snapshot's summary
(`added-data-files`, `added-files-size`): a snapshot's added files are binned by their average size in
powers of two, so any small-file threshold can be read later; deleted files leave from the smallest bin
first (a rewrite replaces the small ones). Java writers record `manifests-created` and `manifests-kept`;
without them (pyiceberg) the manifest count is estimated as one more per snapshot that adds files.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from catalog_es.maintenance.policy_types import POLICY_TYPES


class LastRun(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """The last finished job of one policy type, and when one last succeeded."""

    job_id: uuid.UUID
    finished_ms: int
    outcome: str
    succeeded_ms: int | None = None
    metrics: dict[str, Any] = msgspec.field(default_factory=dict)
    error: str | None = None


class TableHealth(msgspec.Struct, kw_only=True, rename="kebab"):
    """One table's figures. `small_file_bins[k]`: files of an average size below 2**k bytes, since the last
    compaction; `commits_at_success[type]`: the value of `commits` when a job of that type last succeeded."""

    table_id: uuid.UUID
    warehouse_id: uuid.UUID
    created_ms: int
    last_commit_ms: int
    commits: int = 0
    data_files: int = 0
    delete_files: int = 0
    records: int = 0
    data_bytes: int = 0
    snapshot_count: int = 0
    oldest_snapshot_ms: int | None = None
    manifest_count: int = 0
    manifest_count_estimated: bool = False
    small_file_bins: dict[int, int] = msgspec.field(default_factory=dict)
    commits_at_success: dict[str, int] = msgspec.field(default_factory=dict)
    last_runs: dict[str, LastRun] = msgspec.field(default_factory=dict)

    def small_files(self, threshold_bytes: int) -> int:
        """Files (since the last compaction) whose snapshot's average added file was under 2**k <= threshold."""
        return sum(count for k, count in self.small_file_bins.items() if (1 << k) <= threshold_bytes)

    def commits_since(self, policy_type: str) -> int:
        return self.commits - self.commits_at_success.get(policy_type, 0)

    def last_success_ms(self, policy_type: str) -> int | None:
        run = self.last_runs.get(policy_type)
        return run.succeeded_ms if run is not None else None


def _int(summary: dict[str, Any], key: str) -> int:
    try:
        return int(summary.get(key, 0))
    except (TypeError, ValueError):
        return 0


def _fold_metadata(health: TableHealth, metadata: dict[str, Any]) -> None:
    snapshots: list[dict[str, Any]] = metadata.get("snapshots") or []
    health.snapshot_count = len(snapshots)
    health.oldest_snapshot_ms = min((int(s["timestamp-ms"]) for s in snapshots), default=None)
    current = next((s for s in snapshots if s.get("snapshot-id") == metadata.get("current-snapshot-id")), None)
    summary: dict[str, Any] = (current or {}).get("summary") or {}
    health.data_files = _int(summary, "total-data-files")
    health.delete_files = _int(summary, "total-delete-files")
    health.records = _int(summary, "total-records")
    health.data_bytes = _int(summary, "total-files-size")
    if current is None:
        health.manifest_count, health.manifest_count_estimated = 0, False
        health.small_file_bins = {}


def _fold_snapshot(health: TableHealth, summary: dict[str, Any]) -> None:
    added, added_bytes = _int(summary, "added-data-files"), _int(summary, "added-files-size")
    if added:
        bin_ = max(added_bytes // added, 1).bit_length()
        health.small_file_bins[bin_] = health.small_file_bins.get(bin_, 0) + added
    deleted = _int(summary, "deleted-data-files")
    for bin_ in sorted(health.small_file_bins):
        if deleted <= 0:
            break
        taken = min(deleted, health.small_file_bins[bin_])
        health.small_file_bins[bin_] -= taken
        deleted -= taken
    health.small_file_bins = {k: v for k, v in health.small_file_bins.items() if v > 0}
    if "manifests-created" in summary or "manifests-kept" in summary:
        health.manifest_count = _int(summary, "manifests-created") + _int(summary, "manifests-kept")
        health.manifest_count_estimated = False
    elif added or _int(summary, "added-delete-files"):
        health.manifest_count += 1
        health.manifest_count_estimated = True


def new_health(table_id: uuid.UUID, warehouse_id: uuid.UUID, metadata: dict[str, Any], now_ms: int) -> TableHealth:
    """A created or registered table: its metadata's snapshots are all it has."""
    health = TableHealth(table_id=table_id, warehouse_id=warehouse_id, created_ms=now_ms, last_commit_ms=now_ms)
    for snapshot in metadata.get("snapshots") or []:
        _fold_snapshot(health, snapshot.get("summary") or {})
    _fold_metadata(health, metadata)
    return health


def fold_commit(health: TableHealth, updates: list[dict[str, Any]], metadata: dict[str, Any], now_ms: int) -> None:
    """A commit: its new snapshots' summaries, then the figures of the metadata it produced."""
    health.commits += 1
    health.last_commit_ms = now_ms
    for update in updates:
        if update.get("action") == "add-snapshot":
            _fold_snapshot(health, (update.get("snapshot") or {}).get("summary") or {})
    _fold_metadata(health, metadata)


def fold_job_finished(
    health: TableHealth,
    *,
    policy_type: str,
    job_id: uuid.UUID,
    outcome: str,
    metrics: dict[str, Any],
    error: str | None,
    now_ms: int,
) -> None:
    """A finished job; a success resets its type's counters (and the small files, for a compaction)."""
    previous = health.last_runs.get(policy_type)
    succeeded = outcome == "succeeded"
    health.last_runs[policy_type] = LastRun(
        job_id=job_id,
        finished_ms=now_ms,
        outcome=outcome,
        succeeded_ms=now_ms if succeeded else (previous.succeeded_ms if previous else None),
        metrics=metrics,
        error=error,
    )
    if succeeded:
        health.commits_at_success[policy_type] = health.commits
        if policy_type == "system.data-compaction":
            health.small_file_bins = {}


def commits_since_all(health: TableHealth) -> dict[str, int]:
    return {policy_type: health.commits_since(policy_type) for policy_type in POLICY_TYPES}
