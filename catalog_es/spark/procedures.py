"""Maintenance policies as Iceberg Spark procedure calls, and the procedures' result rows as change figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

DATA_COMPACTION = "system.data-compaction"
SNAPSHOT_EXPIRY = "system.snapshot-expiry"
ORPHAN_FILE_REMOVAL = "system.orphan-file-removal"
METADATA_COMPACTION = "system.metadata-compaction"
POLICY_TYPES = (DATA_COMPACTION, SNAPSHOT_EXPIRY, ORPHAN_FILE_REMOVAL, METADATA_COMPACTION)

# rewrite_data_files options a data-compaction policy may set (Iceberg's RewriteDataFiles option names).
_COMPACTION_OPTIONS = (
    "target-file-size-bytes",
    "min-input-files",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "max-concurrent-file-group-rewrites",
    "rewrite-all",
)
# A commit that loses a race with user writes is retried by Iceberg (commit.retry.*); with partial progress a
# group that still fails leaves the others committed, and the user's writes never wait for us.
_COMPACTION_DEFAULTS = {"partial-progress.enabled": "true", "partial-progress.max-commits": "10"}


class UnknownPolicyTypeError(ValueError):
    """A job names a policy type this worker does not run."""


@dataclass(frozen=True)
class ProcedureCall:
    """One `CALL` statement and how to read its result rows."""

    policy_type: str
    sql: str


def quote_identifier(parts: Sequence[str]) -> str:
    """`a`.`b`.`t` with backticks doubled, as Spark's SQL parser reads a multi-part name."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in parts)


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _timestamp(epoch_ms: int) -> str:
    """A UTC timestamp literal (the maintenance session runs with `spark.sql.session.timeZone=UTC`)."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return f"TIMESTAMP '{moment:%Y-%m-%d %H:%M:%S.%f}'"


def _map(options: Mapping[str, str]) -> str:
    return "map(" + ", ".join(f"{_string(key)}, {_string(value)}" for key, value in options.items()) + ")"


def _as_option(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def orphan_cutoff_ms(now_ms: int, older_than_seconds: float | None, floor_seconds: float) -> int:
    """Files newer than the cutoff are kept: the policy's age, never less than the floor.

    Why a floor: a writer uploads data files before its commit; until the commit lands they are referenced by
    no snapshot and look orphaned. The catalog does not know which commits are still being prepared by clients,
    so the floor must exceed the longest write (Iceberg's own default is 3 days; ours is 1 hour).
    """
    age = max(float(older_than_seconds or 0), floor_seconds)
    return now_ms - int(age * 1000)


def procedure_call(
    policy_type: str,
    catalog: str,
    table: Sequence[str],
    content: Mapping[str, Any],
    *,
    now_ms: int,
) -> ProcedureCall:
    """The `CALL <catalog>.system.<procedure>(...)` that carries out one policy on one table.

    Orphan-file removal has no call here: `remove_orphan_files` refuses an age under 24 hours, so the runner
    calls the action it wraps (`SparkActions.deleteOrphanFiles`) with `orphan_cutoff_ms`.

    Raises:
        UnknownPolicyTypeError: orphan-file removal or a policy type outside POLICY_TYPES.
    """
    target = f"table => {_string(quote_identifier(table))}"
    prefix = f"CALL {quote_identifier([catalog])}.system"
    if policy_type == DATA_COMPACTION:
        options = dict(_COMPACTION_DEFAULTS)
        options.update({key: _as_option(content[key]) for key in _COMPACTION_OPTIONS if content.get(key) is not None})
        options.update({str(key): str(value) for key, value in (content.get("config") or {}).items()})
        arguments = [target, f"options => {_map(options)}"]
        if isinstance(content.get("partition-filter"), str) and content["partition-filter"].strip():
            arguments.append(f"where => {_string(content['partition-filter'])}")
        sql = f"{prefix}.rewrite_data_files({', '.join(arguments)})"
    elif policy_type == SNAPSHOT_EXPIRY:
        arguments = [target]
        if (max_age := content.get("max-snapshot-age-seconds")) is not None:
            arguments.append(f"older_than => {_timestamp(now_ms - int(float(max_age) * 1000))}")
        if (keep := content.get("min-snapshots-to-keep")) is not None:
            arguments.append(f"retain_last => {max(1, int(keep))}")
        sql = f"{prefix}.expire_snapshots({', '.join(arguments)})"
    elif policy_type == METADATA_COMPACTION:
        sql = f"{prefix}.rewrite_manifests({target})"
    else:
        raise UnknownPolicyTypeError(f"no procedure for policy type {policy_type!r}")
    return ProcedureCall(policy_type, sql)


def _sum(rows: Sequence[Mapping[str, Any]], column: str) -> int:
    return sum(int(row.get(column) or 0) for row in rows)


def _kebab(column: str) -> str:
    return column.replace("_", "-")


def changes_of(policy_type: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """What a procedure changed, from its result rows (Iceberg 1.10's column names, kebab-case like the events)."""
    columns: tuple[str, ...]
    if policy_type == DATA_COMPACTION:
        columns = (
            "rewritten_data_files_count",
            "added_data_files_count",
            "rewritten_bytes_count",
            "failed_data_files_count",
            "removed_delete_files_count",
        )
    elif policy_type == SNAPSHOT_EXPIRY:
        columns = (
            "deleted_data_files_count",
            "deleted_position_delete_files_count",
            "deleted_equality_delete_files_count",
            "deleted_manifest_files_count",
            "deleted_manifest_lists_count",
            "deleted_statistics_files_count",
        )
    elif policy_type == METADATA_COMPACTION:
        columns = ("rewritten_manifests_count", "added_manifests_count")
    elif policy_type == ORPHAN_FILE_REMOVAL:
        return {"orphan-file-count": len(rows)}
    else:
        raise UnknownPolicyTypeError(f"no procedure for policy type {policy_type!r}")
    return {_kebab(column): _sum(rows, column) for column in columns if any(column in row for row in rows)}
