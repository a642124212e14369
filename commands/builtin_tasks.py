"""The handlers catalog-es itself provides for its queues (`catalog-es worker` and `serve`'s in-process worker)."""

from __future__ import annotations

from commands.expiration import expire_soft_dropped
from commands.metadata_cleanup import clean_up_metadata_files
from commands.tabular_purge import tabular_purge_handler
from commands.task_handlers import METADATA_CLEANUP, TABULAR_EXPIRATION, TABULAR_PURGE, TaskHandler


def builtin_task_handlers(*, purge_concurrency: int = 8, purge_batch_size: int = 64) -> dict[str, TaskHandler]:
    """`tabular_purge`, `tabular_expiration` (soft deletion, commands/expiration.py) and `metadata_cleanup`
    (commands/metadata_cleanup.py)."""
    return {
        TABULAR_PURGE: tabular_purge_handler(purge_concurrency, purge_batch_size),
        TABULAR_EXPIRATION: expire_soft_dropped,
        METADATA_CLEANUP: clean_up_metadata_files,
    }
