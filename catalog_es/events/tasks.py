"""Facts about background tasks (issue 17 §3): scheduled, started, succeeded, failed, cancelled, rescheduled.

One stream per task (`task-<task_id>`); every event carries its warehouse so the relay files it under
`catalog.<warehouse>.task.<action>.<task_id>` and the audit feed can filter by warehouse. A queue's
configuration per warehouse is its own stream (`queueconfig-<uuid5(warehouse, queue)>`).
"""

from __future__ import annotations

import uuid
from typing import Literal

from catalog_es.events.base import Event, Json

_QUEUE_STREAMS = uuid.UUID("0d6c7c52-2f7b-4d1e-9a51-5b8f1f0e7a37")

TaskEntityType = Literal["table", "view", "namespace", "warehouse"]


def queue_config_uuid(warehouse_id: uuid.UUID, queue: str) -> uuid.UUID:
    return uuid.uuid5(_QUEUE_STREAMS, f"{warehouse_id}/{queue}")


class TaskEvent(Event, frozen=True, kw_only=True):
    """A change of one task's state; its stream is the task's own, whatever object the task acts on."""

    stream_kind = "task"
    task_id: uuid.UUID
    warehouse_id: uuid.UUID

    @property
    def stream_id(self) -> str:
        return f"task-{self.task_id}"


class TaskScheduled(TaskEvent, frozen=True, kw_only=True):
    """A task was put on `queue`, due at `due_at_ms`, to act on one object (`entity_type`, `entity_id`)."""

    type_name = "io.catalog-es.task.scheduled.v1"
    queue: str
    entity_type: str
    entity_id: uuid.UUID  # the object acted on (shadows `Event.entity_id`: the stream is the task's, see above)
    payload: Json
    due_at_ms: int
    max_attempts: int


class TaskStarted(TaskEvent, frozen=True, kw_only=True):
    """A worker took the task (attempt counts from 1; a crashed worker's lease expiring makes another)."""

    type_name = "io.catalog-es.task.started.v1"
    attempt: int
    worker: str


class TaskSucceeded(TaskEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.task.succeeded.v1"
    attempt: int
    result: Json


class TaskFailed(TaskEvent, frozen=True, kw_only=True):
    """An attempt failed; due again at `retry_at_ms`, or failed for good when that is None."""

    type_name = "io.catalog-es.task.failed.v1"
    attempt: int
    error: str
    retry_at_ms: int | None


class TaskCancelled(TaskEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.task.cancelled.v1"


class TaskRescheduled(TaskEvent, frozen=True, kw_only=True):
    """A waiting task's due time moved (`run-now`, `run-at` of the control route)."""

    type_name = "io.catalog-es.task.rescheduled.v1"
    due_at_ms: int


class TaskQueueConfigured(Event, frozen=True, kw_only=True):
    """A warehouse's configuration of one queue (Lakekeeper's `task-queue/{queue}/config`)."""

    type_name = "io.catalog-es.task-queue.configured.v1"
    stream_kind = "queueconfig"  # no dash: the relay takes the id after the first one
    warehouse_id: uuid.UUID
    queue: str
    config: Json
    max_seconds_since_last_heartbeat: int | None = None

    @property
    def entity_id(self) -> uuid.UUID:
        return queue_config_uuid(self.warehouse_id, self.queue)


TASK_EVENTS: tuple[type[Event], ...] = (
    TaskScheduled,
    TaskStarted,
    TaskSucceeded,
    TaskFailed,
    TaskCancelled,
    TaskRescheduled,
    TaskQueueConfigured,
)
