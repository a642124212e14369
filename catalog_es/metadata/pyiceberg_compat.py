"""Every private pyiceberg name catalog-es uses, and the table of the catalog's own update rules.

pyiceberg 0.12 applies each table update through a private single-dispatch function. The catalog's rules
(ids it assigns, row lineage, encryption keys, the commit's clock) used to be registered on that function by
import side effect, so every pyiceberg transaction in the process (an `audit export`, a client in the same
interpreter) silently got them. They are now an explicit `UpdateRules` table that only the catalog's commit path
consults; pyiceberg's dispatcher is read, never written. `tests/unit/catalog_es/metadata/test_pyiceberg_compat.py`
pins the version these names were checked against: a pyiceberg upgrade fails there first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pyiceberg.catalog import MetastoreCatalog
from pyiceberg.expressions.visitors import _StrictMetricsEvaluator
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import (
    _apply_table_update,
    _TableMetadataUpdateContext,
    _update_table_metadata_log,
)
from pyiceberg.table.update.snapshot import _new_manifest_list_file_name

CHECKED_PYICEBERG_VERSIONS = ("0.12.",)

UpdateContext = _TableMetadataUpdateContext
"""pyiceberg's per-commit update context (the updates applied so far, the snapshots added)."""

StrictMetricsEvaluator = _StrictMetricsEvaluator
"""pyiceberg's strict metrics evaluator: `eval(data_file)` is true when every row of the file matches the filter."""

UpdateRule = Callable[[Any, TableMetadata, UpdateContext], TableMetadata]


def pyiceberg_rule(kind: type) -> UpdateRule:
    """pyiceberg's own function for one kind of update, for a catalog rule that builds on it."""
    rule: UpdateRule = _apply_table_update.dispatch(kind)
    return rule


def metadata_log_appended(metadata: TableMetadata, previous_location: str, previous_updated_ms: int) -> TableMetadata:
    """The metadata with the previous file appended to its `metadata-log`, trimmed as pyiceberg trims it."""
    return _update_table_metadata_log(metadata, previous_location, previous_updated_ms)


def metadata_version(location: str) -> int:
    """The version number of a `<version>-<uuid>.metadata.json` file name (-1 when it has none)."""
    return MetastoreCatalog._parse_metadata_version(location)


def empty_table_metadata() -> TableMetadata:
    """The placeholder metadata pyiceberg applies a create-table transaction's updates to."""
    empty: TableMetadata = MetastoreCatalog._empty_table_metadata()
    return empty


def manifest_list_file_name(snapshot_id: int, attempt: int, commit_uuid: Any) -> str:
    """A manifest list's file name as pyiceberg's snapshot producer names it."""
    return _new_manifest_list_file_name(snapshot_id=snapshot_id, attempt=attempt, commit_uuid=commit_uuid)


class UpdateRules:
    """Applies table updates: the catalog's rule for a kind where it has one, pyiceberg's own otherwise."""

    def __init__(self, rules: Mapping[type, UpdateRule]) -> None:
        self._rules = dict(rules)

    def apply(self, update: Any, base: TableMetadata, context: UpdateContext) -> TableMetadata:
        rule = self._rules.get(type(update))
        if rule is None:
            return _apply_table_update(update, base, context)
        return rule(update, base, context)
