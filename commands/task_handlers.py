"""The queues a worker serves: each queue's handler in a `QueueRegistry` the composition root builds once.

A handler gets the claimed task and the command context and returns the result recorded in `TaskSucceeded`;
raising records a failed attempt (retried with backoff). Tasks are delivered at least once, so a handler must
be idempotent (a purge deleting files already gone is fine). The registry is a value, not a process-global
table: what a process serves is decided where it is composed (api/container.py), like Lakekeeper's static
task-queue registry, and two workers in one process (tests) never see each other's handlers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from catalog_es.maintenance.jobs import MAINTENANCE_QUEUE
from catalog_es.store.task_queue import Task
from commands.context import CommandContext

TaskHandler = Callable[[Task, CommandContext], Awaitable[dict[str, Any]]]
# Work a queue needs done before its worker claims (the maintenance triggers queue the jobs that are due).
SchedulerStep = Callable[[CommandContext], Awaitable[object]]

TABULAR_PURGE = "tabular_purge"
TABULAR_EXPIRATION = "tabular_expiration"
METADATA_CLEANUP = "metadata_cleanup"  # previous metadata files a commit let go of (commands/metadata_cleanup.py)
MAINTENANCE = MAINTENANCE_QUEUE  # run on Spark by `catalog-es maintenance run` (api/maintenance/job.py)
CATALOG_IMPORT = "catalog_import"  # another catalog adopted into a warehouse (api/imports/task.py)


class TaskLostError(Exception):
    """Raised by a handler that learns it no longer holds its task (cancelled, or taken over): nothing is recorded."""


class TaskRefusedError(Exception):
    """Raised by a handler whose task cannot succeed however often it is retried (an import whose warehouse does
    not cover the source's tables): the task fails for good at once and keeps the progress that says why."""


@dataclass(frozen=True)
class QueueRegistry:
    """Which handler runs each queue's tasks, and the scheduler steps to run before claiming; immutable."""

    handlers: Mapping[str, TaskHandler] = field(default_factory=dict)
    scheduler_steps: tuple[SchedulerStep, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "handlers", MappingProxyType(dict(self.handlers)))

    @property
    def queues(self) -> list[str]:
        return sorted(self.handlers)

    def handler(self, queue: str) -> TaskHandler | None:
        return self.handlers.get(queue)

    def only(self, *queues: str) -> QueueRegistry:
        """The registry of just these queues (a process that serves part of the work)."""
        return QueueRegistry({queue: self.handlers[queue] for queue in queues}, self.scheduler_steps)
