"""The handlers catalog-es itself registers for its queues (the in-process worker and `catalog-es worker` run them)."""

from __future__ import annotations

from commands.expiration import expire_soft_dropped
from commands.metadata_cleanup import clean_up_metadata_files
from commands.tabular_purge import tabular_purge_handler
from commands.task_handlers import METADATA_CLEANUP, TABULAR_EXPIRATION, TABULAR_PURGE, register_task_handler


def register_builtin_task_handlers(*, purge_concurrency: int = 8, purge_batch_size: int = 64) -> None:
    """Register `tabular_purge`, `tabular_expiration` (soft deletion, commands/expiration.py) and
    `metadata_cleanup` (commands/metadata_cleanup.py)."""
    register_task_handler(TABULAR_PURGE, tabular_purge_handler(purge_concurrency, purge_batch_size))
    register_task_handler(TABULAR_EXPIRATION, expire_soft_dropped)
    register_task_handler(METADATA_CLEANUP, clean_up_metadata_files)
