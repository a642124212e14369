"""What runs each queue's tasks: `register_task_handler(queue, handler)` and the registry the workers read.

A handler gets the claimed task and the command context and returns the result recorded in `TaskSucceeded`;
raising records a failed attempt (retried with backoff). Tasks are delivered at least once, so a handler must
be idempotent (a purge deleting files already gone is fine).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from catalog_es.store.task_queue import Task
from commands.context import CommandContext

TaskHandler = Callable[[Task, CommandContext], Awaitable[dict[str, Any]]]

TABULAR_PURGE = "tabular_purge"
TABULAR_EXPIRATION = "tabular_expiration"
METADATA_CLEANUP = "metadata_cleanup"  # previous metadata files a commit let go of (commands/metadata_cleanup.py)
MAINTENANCE = "maintenance"  # run by the Spark worker (`catalog-es maintenance run`), not the in-process one


class TaskLostError(Exception):
    """Raised by a handler that learns it no longer holds its task (cancelled, or taken over): nothing is recorded."""


_HANDLERS: dict[str, TaskHandler] = {}


def register_task_handler(queue: str, handler: TaskHandler) -> None:
    """Make `handler` run the tasks of `queue` (registering again replaces it)."""
    _HANDLERS[queue] = handler


def task_handler(queue: str) -> TaskHandler | None:
    return _HANDLERS.get(queue)


def registered_queues(*, exclude: tuple[str, ...] = (MAINTENANCE,)) -> list[str]:
    """The queues an in-process worker serves: every registered one but those run elsewhere."""
    return sorted(queue for queue in _HANDLERS if queue not in exclude)
