"""Opt-in client patch for the hot-table benchmark: pyiceberg's `Transaction.table_metadata`, computed once per state.

pyiceberg 0.12 replays the staged updates and deep-copies the whole table metadata on every read of
`Transaction.table_metadata`, about fifteen times per append; on a table with a long snapshot history that
copying is most of a writer's CPU (upstream: apache/iceberg-python#3302 and #3784, not released). The patch
keeps the result while neither the table's metadata nor the staged updates changed (both are rebound, never
mutated, when they do), which is the upstream proposal's rule. Only the benchmark's writers use it, and
only when asked (`--client-cache`): it measures the catalog rather than this client cost.
"""

from __future__ import annotations

from typing import Any

from pyiceberg.table import Transaction
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import update_table_metadata

_ORIGINAL = Transaction.table_metadata
_SLOT = "_bench_table_metadata"


def _table_metadata_once(self: Transaction) -> TableMetadata:
    base, updates = self._table.metadata, self._updates
    kept: tuple[Any, Any, TableMetadata] | None = self.__dict__.get(_SLOT)
    if kept is not None and kept[0] is base and kept[1] is updates:
        return kept[2]
    metadata = update_table_metadata(base, updates)
    self.__dict__[_SLOT] = (base, updates, metadata)
    return metadata


def install() -> None:
    """Make every `Transaction` compute its metadata once per (table metadata, staged updates)."""
    Transaction.table_metadata = property(_table_metadata_once)  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    Transaction.table_metadata = _ORIGINAL  # type: ignore[method-assign]
