"""Policies as Iceberg Spark procedure calls, result rows as figures, the orphan age floor, and the history line."""

from __future__ import annotations

import pytest

from catalog_es.maintenance.policy_types import decode_policy, encode_policy
from catalog_es.spark.procedures import UnknownPolicyTypeError, changes_of, orphan_cutoff_ms, procedure_call
from projections.audit.change_summary import summarize_maintenance_job
from projections.audit.history import history_streams

NOW_MS = 1_795_000_000_000  # 2026-11-18T11:06:40Z


def _content(policy_type: str, **fields: object) -> dict[str, object]:
    """The effective policy as the scheduler puts it in a job: every field, kebab-case."""
    return encode_policy(decode_policy(policy_type, {"enable": True, **fields}))


def test_compaction_passes_the_policy_options_and_partial_progress_when_called() -> None:
    content = _content(
        "system.data-compaction",
        **{"target-file-size-bytes": 1024, "min-input-files": 3, "partition-filter": "day = '2026-11-18'"},
    )
    call = procedure_call("system.data-compaction", "maintenance_0", ["ns", "t"], content, now_ms=NOW_MS)
    assert call.sql.startswith("CALL `maintenance_0`.system.rewrite_data_files(table => '`ns`.`t`', options => map(")
    for option in ("'target-file-size-bytes', '1024'", "'min-input-files', '3'", "'partial-progress.enabled', 'true'"):
        assert option in call.sql
    assert call.sql.endswith("where => 'day = \\'2026-11-18\\'')")


def test_expiry_sets_the_age_cutoff_and_snapshots_kept_when_called() -> None:
    content = _content("system.snapshot-expiry", **{"max-snapshot-age-seconds": 3600, "min-snapshots-to-keep": 4})
    call = procedure_call("system.snapshot-expiry", "c", ["a", "b", "t"], content, now_ms=NOW_MS)
    assert call.sql == (
        "CALL `c`.system.expire_snapshots(table => '`a`.`b`.`t`',"
        " older_than => TIMESTAMP '2026-11-18 10:06:40.000000', retain_last => 4)"
    )


def test_names_are_quoted_when_they_hold_backticks_or_quotes() -> None:
    call = procedure_call("system.metadata-compaction", "c", ["we`ird", "it's"], {}, now_ms=NOW_MS)
    assert call.sql == "CALL `c`.system.rewrite_manifests(table => '`we``ird`.`it\\'s`')"


def test_orphan_removal_has_no_call_and_unknown_types_are_refused() -> None:
    for policy_type in ("system.orphan-file-removal", "system.unknown"):
        with pytest.raises(UnknownPolicyTypeError):
            procedure_call(policy_type, "c", ["t"], {}, now_ms=NOW_MS)


def test_orphan_cutoff_never_comes_later_than_the_floor_when_a_policy_asks_for_less() -> None:
    assert orphan_cutoff_ms(NOW_MS, 60, floor_seconds=3600) == NOW_MS - 3_600_000
    assert orphan_cutoff_ms(NOW_MS, 86_400, floor_seconds=3600) == NOW_MS - 86_400_000
    assert orphan_cutoff_ms(NOW_MS, None, floor_seconds=0) == NOW_MS


def test_figures_come_from_the_result_rows_in_kebab_case() -> None:
    rows = [{"rewritten_data_files_count": 200, "added_data_files_count": 1, "rewritten_bytes_count": 188_650}]
    assert changes_of("system.data-compaction", rows) == {
        "rewritten-data-files-count": 200,
        "added-data-files-count": 1,
        "rewritten-bytes-count": 188_650,
    }
    assert changes_of("system.orphan-file-removal", [{"orphan_file_location": "a"}, {"orphan_file_location": "b"}]) == {
        "orphan-file-count": 2
    }


def test_a_tables_history_shows_its_maintenance_jobs_with_their_figures() -> None:
    assert history_streams("table-1234") == ["table-1234", "maintenance-1234"]
    assert history_streams("view-1234") == ["view-1234"]
    finished = {
        "policy_type": "system.data-compaction",
        "outcome": "succeeded",
        "metrics": {"rewritten-data-files-count": 200, "orphan-file-locations": ["x"]},
    }
    assert summarize_maintenance_job(finished, finished=True).describe() == (
        "maintenance system.data-compaction succeeded: rewritten-data-files-count=200"
    )
    failed = {"policy_type": "system.snapshot-expiry", "outcome": "failed", "metrics": {}, "error": "boom"}
    assert (
        summarize_maintenance_job(failed, finished=True).describe() == "maintenance system.snapshot-expiry failed: boom"
    )
