"""Maintenance policy content, inheritance and the job payload: pure rules, no services."""

from __future__ import annotations

import uuid

import msgspec
import pytest

from catalog_es.maintenance.jobs import InheritedFrom, MaintenanceJob, decode_job, encode_job
from catalog_es.maintenance.policy_types import (
    POLICY_TYPES,
    DataCompaction,
    OrphanFileRemoval,
    PolicyContentError,
    SnapshotExpiry,
    decode_policy,
    encode_policy,
)
from catalog_es.maintenance.triggers import nearest_policies

WAREHOUSE, PARENT, CHILD, TABLE = (uuid.UUID(int=n) for n in (1, 2, 3, 4))


def test_polaris_type_names_are_the_four_policy_types_when_listed():
    assert set(POLICY_TYPES) == {
        "system.data-compaction",
        "system.snapshot-expiry",
        "system.orphan-file-removal",
        "system.metadata-compaction",
    }


def test_content_gets_defaults_and_kebab_names_when_decoded():
    content = decode_policy("system.data-compaction", b'{"enable": true, "target-file-size-bytes": 1048576}')
    assert isinstance(content, DataCompaction)
    assert content.small_threshold() == 786432  # three quarters of the target, Iceberg's min-file-size-bytes
    encoded = encode_policy(content)
    assert encoded["min-input-files"] == 5
    assert encoded["target-file-size-bytes"] == 1048576
    assert decode_policy("system.data-compaction", encoded) == content


def test_orphan_removal_runs_daily_when_no_schedule_is_given():
    content = decode_policy("system.orphan-file-removal", {"enable": True, "older-than-seconds": 3600})
    assert isinstance(content, OrphanFileRemoval)
    assert (content.schedule_seconds, content.older_than_seconds) == (86400, 3600)


@pytest.mark.parametrize(
    ("policy_type", "body", "message"),
    [
        ("system.data-compaction", b"{}", "missing required field `enable`"),
        ("system.data-compaction", b'{"enable": true, "max-files": 3}', "unknown field `max-files`"),
        ("system.data-compaction", b'{"enable": "yes"}', "Expected `bool`"),
        ("system.data-compaction", b'{"enable": true, "min-input-files": 0}', "`min-input-files` must be at least 1"),
        ("system.snapshot-expiry", b'{"enable": true, "max-snapshot-age-seconds": -5}', "at least 1"),
        ("system.orphan-file-removal", b'{"enable": true, "older-than-seconds": 0}', "at least 1"),
        ("system.metadata-compaction", b'{"enable": tru', "not JSON"),
        ("system.vacuum", b'{"enable": true}', "Unknown policy type"),
    ],
)
def test_content_is_refused_with_the_field_named_when_it_does_not_fit_the_type(policy_type, body, message):
    with pytest.raises(PolicyContentError, match=message.replace("`", ".").replace("(", r"\(")):
        decode_policy(policy_type, body)


def test_keeping_zero_snapshots_beyond_refs_is_allowed_when_declared():
    content = decode_policy("system.snapshot-expiry", {"enable": True, "min-snapshots-to-keep": 0})
    assert isinstance(content, SnapshotExpiry)
    assert content.min_snapshots_to_keep == 0


def _declared(kind, object_id, policy_type, **content):
    return (InheritedFrom(kind, object_id), policy_type, {"enable": True, **content})


def test_nearest_object_wins_per_type_when_policies_are_declared_at_several_levels():
    declared = [  # nearest first, as the read model lists them
        _declared("table", TABLE, "system.snapshot-expiry", **{"min-snapshots-to-keep": 7}),
        _declared("namespace", CHILD, "system.data-compaction", **{"min-input-files": 3}),
        _declared("namespace", PARENT, "system.data-compaction", **{"min-input-files": 50}),
        _declared("namespace", PARENT, "system.orphan-file-removal"),
        _declared("warehouse", WAREHOUSE, "system.snapshot-expiry", **{"min-snapshots-to-keep": 1}),
        _declared("warehouse", WAREHOUSE, "system.metadata-compaction"),
    ]
    effective = {p.policy_type: p for p in nearest_policies(declared)}
    assert {t: (p.inherited_from.type, p.inherited_from.id) for t, p in effective.items()} == {
        "system.snapshot-expiry": ("table", TABLE),
        "system.data-compaction": ("namespace", CHILD),
        "system.orphan-file-removal": ("namespace", PARENT),
        "system.metadata-compaction": ("warehouse", WAREHOUSE),
    }
    compaction = effective["system.data-compaction"].content
    assert isinstance(compaction, DataCompaction)
    assert compaction.min_input_files == 3


def test_job_payload_round_trips_with_the_agreed_keys_when_encoded():
    content = decode_policy("system.data-compaction", {"enable": True})
    job = MaintenanceJob(
        policy_type="system.data-compaction",
        policy=encode_policy(content),
        inherited_from=InheritedFrom("namespace", CHILD),
        trigger={"kind": "commits", "count": 12},
    )
    payload = msgspec.json.decode(msgspec.json.encode(encode_job(job)))
    assert set(payload) == {"policy-type", "policy", "inherited-from", "trigger"}
    assert payload["inherited-from"] == {"type": "namespace", "id": str(CHILD)}
    assert decode_job(payload) == job
    assert decode_job(payload).content() == content
