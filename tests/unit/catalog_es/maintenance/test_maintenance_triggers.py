"""Health figures folded from commits, and the triggers that make maintenance due: pure rules, no services."""

from __future__ import annotations

import uuid

from catalog_es.maintenance.health import TableHealth, fold_commit, fold_job_finished, new_health
from catalog_es.maintenance.jobs import InheritedFrom
from catalog_es.maintenance.policy_types import decode_policy
from catalog_es.maintenance.triggers import EffectivePolicy, due_jobs

TABLE, WAREHOUSE = uuid.UUID(int=7), uuid.UUID(int=1)
DAY_MS = 86_400_000
T0 = 1_700_000_000_000


def _snapshot(snapshot_id, at_ms, summary):
    return {"snapshot-id": snapshot_id, "timestamp-ms": at_ms, "summary": summary}


class _Table:
    """Commits as a writer makes them: each one adds a snapshot and records the resulting metadata."""

    def __init__(self):
        self.snapshots = []
        self.health = new_health(TABLE, WAREHOUSE, {"snapshots": []}, T0)
        self.totals = {"total-data-files": 0}

    def commit(self, at_ms, *, added=0, added_bytes=0, deleted=0, operation="append", **extra):
        self.totals["total-data-files"] += added - deleted
        summary = {
            "operation": operation,
            "added-data-files": str(added),
            "added-files-size": str(added_bytes),
            "deleted-data-files": str(deleted),
            **{k: str(v) for k, v in self.totals.items()},
            **extra,
        }
        snapshot = _snapshot(len(self.snapshots) + 1, at_ms, summary)
        self.snapshots.append(snapshot)
        metadata = {"snapshots": list(self.snapshots), "current-snapshot-id": snapshot["snapshot-id"]}
        fold_commit(self.health, [{"action": "add-snapshot", "snapshot": snapshot}], metadata, at_ms)

    def expire_all_but_last(self, at_ms):
        self.snapshots = self.snapshots[-1:]
        metadata = {"snapshots": list(self.snapshots), "current-snapshot-id": self.snapshots[-1]["snapshot-id"]}
        fold_commit(self.health, [{"action": "remove-snapshots", "snapshot-ids": [1]}], metadata, at_ms)


def _policy(policy_type, level="warehouse", **content):
    return EffectivePolicy(
        policy_type=policy_type,
        content=decode_policy(policy_type, {"enable": True, **content}),
        inherited_from=InheritedFrom(level, WAREHOUSE),
    )


def _finish(health: TableHealth, policy_type, at_ms, outcome="succeeded"):
    fold_job_finished(
        health, policy_type=policy_type, job_id=uuid.uuid4(), outcome=outcome, metrics={}, error=None, now_ms=at_ms
    )


def test_small_files_are_counted_per_threshold_when_appends_add_small_files():
    table = _Table()
    for n in range(20):
        table.commit(T0 + n, added=1, added_bytes=2_000)  # 2 kB files
    table.commit(T0 + 50, added=2, added_bytes=2 * 300_000_000)  # two big ones
    health = table.health
    assert (health.data_files, health.snapshot_count, health.commits) == (22, 21, 21)
    assert health.small_files(4096) == 20
    assert health.small_files(1024) == 0
    assert health.small_files(512 * 1024 * 1024) == 22
    assert health.oldest_snapshot_ms == T0


def test_a_rewrite_removes_the_smallest_files_first_when_it_deletes_data_files():
    table = _Table()
    for n in range(10):
        table.commit(T0 + n, added=1, added_bytes=1_000)
    table.commit(T0 + 20, added=1, added_bytes=9_000_000, deleted=10, operation="replace")
    assert table.health.small_files(4096) == 0
    assert table.health.data_files == 1
    assert table.health.small_files(16 * 1024 * 1024) == 1


def test_manifest_count_is_exact_when_the_writer_records_it_and_estimated_otherwise():
    table = _Table()
    for n in range(3):
        table.commit(T0 + n, added=1, added_bytes=100)
    assert (table.health.manifest_count, table.health.manifest_count_estimated) == (3, True)
    table.commit(T0 + 9, operation="replace", **{"manifests-created": 1, "manifests-kept": 0, "manifests-replaced": 3})
    assert (table.health.manifest_count, table.health.manifest_count_estimated) == (1, False)


def test_compaction_is_due_when_small_files_reach_min_input_files():
    table = _Table()
    policy = _policy("system.data-compaction", **{"min-input-files": 5})
    for n in range(4):
        table.commit(T0 + n, added=1, added_bytes=1_000)
    assert due_jobs(table.health, [policy], T0 + 10) == []
    table.commit(T0 + 5, added=1, added_bytes=1_000)
    (job,) = due_jobs(table.health, [policy], T0 + 10)
    assert job.policy_type == "system.data-compaction"
    assert job.trigger == {"kind": "small-files", "count": 5, "threshold-bytes": 402653184}
    assert job.inherited_from == InheritedFrom("warehouse", WAREHOUSE)
    assert job.policy["min-input-files"] == 5


def test_compaction_is_due_after_k_commits_when_trigger_commits_is_set():
    table = _Table()
    policy = _policy("system.data-compaction", **{"trigger-commits": 3, "min-input-files": 1000})
    for n in range(2):
        table.commit(T0 + n, added=1, added_bytes=500_000_000)
    assert due_jobs(table.health, [policy], T0 + 10) == []
    table.commit(T0 + 3, added=1, added_bytes=500_000_000)
    assert [job.trigger for job in due_jobs(table.health, [policy], T0 + 10)] == [{"kind": "commits", "count": 3}]


def test_a_success_resets_its_types_counters_and_a_failure_does_not():
    table = _Table()
    policy = _policy("system.data-compaction", **{"min-input-files": 2})
    for n in range(3):
        table.commit(T0 + n, added=1, added_bytes=1_000)
    _finish(table.health, "system.data-compaction", T0 + 5, outcome="failed")
    assert len(due_jobs(table.health, [policy], T0 + 10)) == 1
    _finish(table.health, "system.data-compaction", T0 + 6)
    assert due_jobs(table.health, [policy], T0 + 10) == []
    assert table.health.commits_since("system.data-compaction") == 0
    assert table.health.commits_since("system.snapshot-expiry") == 3
    assert table.health.last_runs["system.data-compaction"].succeeded_ms == T0 + 6


def test_snapshot_expiry_is_due_when_a_snapshot_outlives_the_max_age_beyond_the_ones_kept():
    table = _Table()
    policy = _policy("system.snapshot-expiry", **{"max-snapshot-age-seconds": 86400, "min-snapshots-to-keep": 2})
    table.commit(T0, added=1, added_bytes=10)
    table.commit(T0 + 1000, added=1, added_bytes=10)
    assert due_jobs(table.health, [policy], T0 + 2 * DAY_MS) == []  # only as many as are kept
    table.commit(T0 + 2000, added=1, added_bytes=10)
    assert due_jobs(table.health, [policy], T0 + DAY_MS // 2) == []  # none old enough
    (job,) = due_jobs(table.health, [policy], T0 + 2 * DAY_MS)
    assert job.trigger == {"kind": "snapshot-age", "oldest-ms": T0, "count": 3}
    _finish(table.health, "system.snapshot-expiry", T0 + 2 * DAY_MS)
    # A tag may keep the old snapshot: with no commit since the last run, it is not due again.
    assert due_jobs(table.health, [policy], T0 + 3 * DAY_MS) == []
    table.expire_all_but_last(T0 + 3 * DAY_MS)
    assert table.health.snapshot_count == 1


def test_snapshot_expiry_is_due_at_the_snapshot_count_when_trigger_snapshot_count_is_set():
    table = _Table()
    policy = _policy("system.snapshot-expiry", **{"trigger-snapshot-count": 4})
    for n in range(4):
        table.commit(T0 + n, added=1, added_bytes=10)
    assert [j.trigger for j in due_jobs(table.health, [policy], T0 + 10)] == [{"kind": "snapshot-count", "count": 4}]


def test_metadata_compaction_is_due_when_the_manifests_reach_min_manifests():
    table = _Table()
    policy = _policy("system.metadata-compaction", **{"min-manifests": 3})
    for n in range(3):
        table.commit(T0 + n, added=1, added_bytes=10)
    (job,) = due_jobs(table.health, [policy], T0 + 10)
    assert job.trigger == {"kind": "manifests", "count": 3, "estimated": True}


def test_orphan_removal_runs_on_its_schedule_even_when_nothing_was_committed():
    table = _Table()
    policy = _policy("system.orphan-file-removal", **{"schedule-seconds": 3600})
    assert due_jobs(table.health, [policy], T0 + 1_000) == []
    (job,) = due_jobs(table.health, [policy], T0 + 3_600_000)
    assert job.trigger == {"kind": "schedule", "every-seconds": 3600, "last-run-ms": None}
    _finish(table.health, "system.orphan-file-removal", T0 + 3_600_000)
    assert due_jobs(table.health, [policy], T0 + 3_700_000) == []
    assert len(due_jobs(table.health, [policy], T0 + 7_200_000)) == 1


def test_nothing_is_due_when_the_policy_is_disabled_or_a_job_is_already_queued():
    table = _Table()
    for n in range(10):
        table.commit(T0 + n, added=1, added_bytes=10)
    enabled = _policy("system.data-compaction", **{"min-input-files": 2})
    disabled = EffectivePolicy(
        policy_type="system.data-compaction",
        content=decode_policy("system.data-compaction", {"enable": False, "min-input-files": 2}),
        inherited_from=InheritedFrom("table", TABLE),
    )
    assert due_jobs(table.health, [disabled], T0 + 10) == []
    assert due_jobs(table.health, [enabled], T0 + 10, active={"system.data-compaction"}) == []
    assert len(due_jobs(table.health, [enabled], T0 + 10)) == 1
