"""A maintenance job: the payload of a task on queue `maintenance` (the contract with the Spark worker)."""

from __future__ import annotations

import uuid
from typing import Any, Literal

import msgspec

from catalog_es.maintenance.policy_types import PolicyContent, PolicyType, decode_policy

MAINTENANCE_QUEUE = "maintenance"
MAINTENANCE_ACTOR = "system:maintenance"

PolicyLevel = Literal["warehouse", "namespace", "table"]


class InheritedFrom(msgspec.Struct, frozen=True):
    """The object the effective policy was declared on."""

    type: PolicyLevel
    id: uuid.UUID


class MaintenanceJob(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """What to run on one table (the task's `entity_id`): the effective policy and what made it due.

    `trigger` e.g. `{"kind": "commits", "count": 12}`, `{"kind": "small-files", "count": 40}`,
    `{"kind": "snapshot-count", "count": 30}`, `{"kind": "snapshot-age", "oldest-ms": …}`,
    `{"kind": "manifests", "count": 120}`, `{"kind": "schedule", "last-run-ms": … | None}`.
    """

    policy_type: PolicyType
    policy: dict[str, Any]
    inherited_from: InheritedFrom
    trigger: dict[str, Any]

    def content(self) -> PolicyContent:
        """The policy typed (e.g. `DataCompaction`). Raises: PolicyContentError."""
        return decode_policy(self.policy_type, self.policy)


def encode_job(job: MaintenanceJob) -> dict[str, Any]:
    """The task payload (JSON builtins)."""
    payload: dict[str, Any] = msgspec.to_builtins(job)
    return payload


def decode_job(payload: dict[str, Any]) -> MaintenanceJob:
    """A task payload back as a job. Raises: msgspec.ValidationError for a payload of another shape."""
    return msgspec.convert(payload, MaintenanceJob)
