"""Facts of table maintenance (issue 22): policies declared on objects, and the jobs the Spark worker ran."""

from __future__ import annotations

import uuid
from typing import Literal

from catalog_es.events.base import Event, Json

PolicyObjectKind = Literal["warehouse", "namespace", "table"]
JobOutcome = Literal["succeeded", "failed", "skipped"]


class PolicyEvent(Event, frozen=True, kw_only=True):
    """A policy on one object; one stream per object, so two writers of its policies serialise."""

    stream_kind = "policy"
    object_kind: PolicyObjectKind
    object_id: uuid.UUID
    warehouse_id: uuid.UUID
    policy_type: str

    @property
    def entity_id(self) -> uuid.UUID:
        return self.object_id


class PolicySet(PolicyEvent, frozen=True, kw_only=True):
    """The object's policy of this type is now `content` (checked, every field with its value)."""

    type_name = "io.catalog-es.policy.set.v1"
    content: Json


class PolicyRemoved(PolicyEvent, frozen=True, kw_only=True):
    """The object no longer declares this type: what is above it applies again."""

    type_name = "io.catalog-es.policy.removed.v1"


class MaintenanceJobEvent(Event, frozen=True, kw_only=True):
    """A maintenance job on a table, actor `system:maintenance`.

    Its own stream per table (`maintenance-<table-id>`), never the table's: recording a job must not move the
    table stream's version under a user's commit.
    """

    stream_kind = "maintenance"
    table_id: uuid.UUID
    warehouse_id: uuid.UUID
    job_id: uuid.UUID  # the task id of the job on queue `maintenance`
    policy_type: str
    attempt: int

    @property
    def entity_id(self) -> uuid.UUID:
        return self.table_id


class MaintenanceJobStarted(MaintenanceJobEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.maintenance-job.started.v1"
    trigger: Json


class MaintenanceJobFinished(MaintenanceJobEvent, frozen=True, kw_only=True):
    """The job's outcome and what it changed (`metrics`, e.g. `rewritten-data-files-count`, `rewritten-bytes-count`,
    `deleted-data-files-count`, `orphan-file-count`); a `succeeded` one resets its type's counters in the health
    view."""

    type_name = "io.catalog-es.maintenance-job.finished.v1"
    outcome: JobOutcome
    metrics: Json
    error: str | None = None


MAINTENANCE_EVENTS: tuple[type[Event], ...] = (PolicySet, PolicyRemoved, MaintenanceJobStarted, MaintenanceJobFinished)
