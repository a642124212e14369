"""The handlers catalog-es itself registers for its queues (the in-process worker and `catalog-es worker` run them)."""

from __future__ import annotations

from commands.tabular_purge import tabular_purge_handler
from commands.task_handlers import TABULAR_PURGE, register_task_handler


def register_builtin_task_handlers(*, purge_concurrency: int = 8, purge_batch_size: int = 64) -> None:
    """Register `tabular_purge` (more queues join here: `tabular_expiration` with soft deletion)."""
    register_task_handler(TABULAR_PURGE, tabular_purge_handler(purge_concurrency, purge_batch_size))
