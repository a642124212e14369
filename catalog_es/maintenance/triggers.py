"""When maintenance is due: the effective policies of a table evaluated against its health figures (pure)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import msgspec

from catalog_es.maintenance.health import TableHealth
from catalog_es.maintenance.jobs import InheritedFrom, MaintenanceJob
from catalog_es.maintenance.policy_types import (
    DataCompaction,
    MetadataCompaction,
    OrphanFileRemoval,
    PolicyContent,
    PolicyType,
    SnapshotExpiry,
    decode_policy,
    encode_policy,
)


class EffectivePolicy(msgspec.Struct, frozen=True, kw_only=True):
    """The policy of one type in force on a table, and the object it was declared on (nearest wins)."""

    policy_type: PolicyType
    content: PolicyContent
    inherited_from: InheritedFrom


Trigger = dict[str, Any]


def _schedule(health: TableHealth, policy_type: str, seconds: int | None, now_ms: int) -> Trigger | None:
    """A schedule counts from the last success, or from the table's creation when none has run."""
    if seconds is None:
        return None
    last = health.last_success_ms(policy_type)
    if now_ms - (last if last is not None else health.created_ms) >= seconds * 1000:
        return {"kind": "schedule", "every-seconds": seconds, "last-run-ms": last}
    return None


def _commits(health: TableHealth, policy_type: str, needed: int | None) -> Trigger | None:
    count = health.commits_since(policy_type)
    return {"kind": "commits", "count": count} if needed is not None and count >= needed else None


def _data_compaction(health: TableHealth, policy: DataCompaction, now_ms: int) -> Trigger | None:
    small = health.small_files(policy.small_threshold())
    if small >= max(policy.small_files_needed(), 2):  # one file alone is never worth rewriting
        return {"kind": "small-files", "count": small, "threshold-bytes": policy.small_threshold()}
    return _commits(health, policy_type="system.data-compaction", needed=policy.trigger_commits)


def _snapshot_expiry(health: TableHealth, policy: SnapshotExpiry, now_ms: int) -> Trigger | None:
    if health.snapshot_count <= policy.min_snapshots_to_keep:
        return None
    if policy.trigger_snapshot_count is not None and health.snapshot_count >= policy.trigger_snapshot_count:
        return {"kind": "snapshot-count", "count": health.snapshot_count}
    oldest = health.oldest_snapshot_ms
    if oldest is not None and now_ms - oldest > policy.max_snapshot_age_seconds * 1000:
        return {"kind": "snapshot-age", "oldest-ms": oldest, "count": health.snapshot_count}
    return None


def _metadata_compaction(health: TableHealth, policy: MetadataCompaction, now_ms: int) -> Trigger | None:
    if health.manifest_count >= policy.min_manifests:
        return {"kind": "manifests", "count": health.manifest_count, "estimated": health.manifest_count_estimated}
    return _commits(health, "system.metadata-compaction", policy.trigger_commits)


def _orphan_file_removal(health: TableHealth, policy: OrphanFileRemoval, now_ms: int) -> Trigger | None:
    return _commits(health, "system.orphan-file-removal", policy.trigger_commits)


def _trigger(health: TableHealth, effective: EffectivePolicy, now_ms: int) -> Trigger | None:
    policy, policy_type = effective.content, effective.policy_type
    if isinstance(policy, DataCompaction):
        fired = _data_compaction(health, policy, now_ms)
    elif isinstance(policy, SnapshotExpiry):
        fired = _snapshot_expiry(health, policy, now_ms)
    elif isinstance(policy, MetadataCompaction):
        fired = _metadata_compaction(health, policy, now_ms)
    elif isinstance(policy, OrphanFileRemoval):
        fired = _orphan_file_removal(health, policy, now_ms)
    else:
        return None
    return fired or _schedule(health, policy_type, policy.schedule_seconds, now_ms)


def _changed_since_last_run(health: TableHealth, policy_type: str) -> bool:
    """Nothing to do on a table that has not changed since the type last succeeded; orphan files, though,
    come from writes that never committed, so orphan-file removal runs on its schedule regardless."""
    return (
        policy_type == "system.orphan-file-removal"
        or health.last_success_ms(policy_type) is None
        or health.commits_since(policy_type) > 0
    )


def due_jobs(
    health: TableHealth,
    policies: Sequence[EffectivePolicy],
    now_ms: int,
    *,
    active: Collection[str] = (),
) -> list[MaintenanceJob]:
    """The jobs due now on this table, one per enabled policy whose trigger fired; types in `active` (a job
    already scheduled or running) are skipped so a job is never queued twice."""
    jobs = []
    for effective in policies:
        if not effective.content.enable or effective.policy_type in active:
            continue
        if not _changed_since_last_run(health, effective.policy_type):
            continue
        trigger = _trigger(health, effective, now_ms)
        if trigger is not None:
            jobs.append(
                MaintenanceJob(
                    policy_type=effective.policy_type,
                    policy=encode_policy(effective.content),
                    inherited_from=effective.inherited_from,
                    trigger=trigger,
                )
            )
    return jobs


def nearest_policies(declared: Sequence[tuple[InheritedFrom, PolicyType, dict[str, Any]]]) -> list[EffectivePolicy]:
    """Inheritance: `declared` lists the policies on the table and its ancestors, nearest object first;
    the first of each type wins (a table's own overrides its namespace's, a child namespace its parent's,
    any namespace the warehouse's). Stored content is re-read with today's defaults."""
    effective: dict[str, EffectivePolicy] = {}
    for origin, policy_type, content in declared:
        if policy_type not in effective:
            effective[policy_type] = EffectivePolicy(
                policy_type=policy_type, content=decode_policy(policy_type, content), inherited_from=origin
            )
    return list(effective.values())
