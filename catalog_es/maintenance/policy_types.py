"""The four maintenance policy types (Polaris' names) and their content, validated with msgspec."""

from __future__ import annotations

from typing import Any, Literal, get_args

import msgspec

PolicyType = Literal[
    "system.data-compaction",
    "system.snapshot-expiry",
    "system.orphan-file-removal",
    "system.metadata-compaction",
]
POLICY_TYPES: tuple[PolicyType, ...] = get_args(PolicyType)

_MIB = 1024 * 1024
_DAY = 86_400


class PolicyContent(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True):
    """What every type has: `enable`, Polaris' optional `version` and free `config` map, and a schedule.

    `schedule-seconds`: run at most this often, whenever the table changed since the last run (None: no schedule).
    """

    enable: bool
    version: str | None = None
    config: dict[str, str] = msgspec.field(default_factory=dict)
    schedule_seconds: int | None = msgspec.field(default=None)


class DataCompaction(PolicyContent, frozen=True, kw_only=True):
    """`rewrite_data_files`: due after `trigger-small-files` small files (default `min-input-files`) or
    `trigger-commits` commits since the last compaction. A small file is under `small-file-bytes`
    (default three quarters of the target, Iceberg's own `min-file-size-bytes`)."""

    target_file_size_bytes: int = 512 * _MIB
    min_input_files: int = 5
    partition_filter: str | None = None
    small_file_bytes: int | None = None
    trigger_small_files: int | None = None
    trigger_commits: int | None = None

    def small_threshold(self) -> int:
        return self.small_file_bytes if self.small_file_bytes is not None else self.target_file_size_bytes * 3 // 4

    def small_files_needed(self) -> int:
        return self.trigger_small_files if self.trigger_small_files is not None else self.min_input_files


class SnapshotExpiry(PolicyContent, frozen=True, kw_only=True):
    """`expire_snapshots`: due when a snapshot older than `max-snapshot-age-seconds` is beyond the
    `min-snapshots-to-keep` newest, or the table holds `trigger-snapshot-count` snapshots. Snapshots a tag or
    branch references are kept while `keep-refs` (Iceberg's own rule; false lets ref ages apply)."""

    max_snapshot_age_seconds: int = 5 * _DAY
    min_snapshots_to_keep: int = 1
    keep_refs: bool = True
    clean_expired_files: bool = True
    trigger_snapshot_count: int | None = None


class OrphanFileRemoval(PolicyContent, frozen=True, kw_only=True):
    """`remove_orphan_files` for files older than `older-than-seconds`, on its schedule (default daily).

    The age floor keeps files a commit in flight could still reference: never below `MIN_ORPHAN_AGE_SECONDS`.
    """

    older_than_seconds: int = 3 * _DAY
    schedule_seconds: int | None = _DAY
    trigger_commits: int | None = None


class MetadataCompaction(PolicyContent, frozen=True, kw_only=True):
    """`rewrite_manifests`: due when the current snapshot lists `min-manifests` manifests or more."""

    min_manifests: int = 100
    trigger_commits: int | None = None


POLICY_CONTENT: dict[PolicyType, type[PolicyContent]] = {
    "system.data-compaction": DataCompaction,
    "system.snapshot-expiry": SnapshotExpiry,
    "system.orphan-file-removal": OrphanFileRemoval,
    "system.metadata-compaction": MetadataCompaction,
}

# A commit in flight writes its files before it commits: younger files may be about to become referenced.
MIN_ORPHAN_AGE_SECONDS = 1


class PolicyContentError(ValueError):
    """Content that does not fit its policy type; the message names the field."""


def _check(content: PolicyContent) -> None:
    positive = {
        name: value
        for name, value in msgspec.structs.asdict(content).items()
        if isinstance(value, int) and not isinstance(value, bool)
    }
    for name, value in positive.items():
        floor = 0 if name == "min_snapshots_to_keep" else 1
        if value < floor:
            raise PolicyContentError(f"`{name.replace('_', '-')}` must be at least {floor}, got {value}")
    if isinstance(content, OrphanFileRemoval) and content.older_than_seconds < MIN_ORPHAN_AGE_SECONDS:
        raise PolicyContentError(f"`older-than-seconds` must be at least {MIN_ORPHAN_AGE_SECONDS}")


def decode_policy(policy_type: str, content: bytes | dict[str, Any]) -> PolicyContent:
    """Typed, checked content of a policy type.

    Raises:
        PolicyContentError: unknown type, malformed JSON, a wrong or unknown field, or a value out of range.
    """
    if policy_type not in POLICY_CONTENT:
        raise PolicyContentError(f"Unknown policy type {policy_type!r}; known: {', '.join(POLICY_TYPES)}")
    cls = POLICY_CONTENT[policy_type]
    try:
        decoded = (
            msgspec.json.decode(content, type=cls) if isinstance(content, bytes) else msgspec.convert(content, cls)
        )
    except msgspec.ValidationError as error:
        raise PolicyContentError(f"Invalid {policy_type} policy: {error}") from None
    except msgspec.DecodeError as error:
        raise PolicyContentError(f"Policy content is not JSON: {error}") from None
    _check(decoded)
    return decoded


def encode_policy(content: PolicyContent) -> dict[str, Any]:
    """The content as JSON builtins with every field (defaults included), kebab-case like the wire."""
    data: dict[str, Any] = msgspec.to_builtins(content)
    return data
