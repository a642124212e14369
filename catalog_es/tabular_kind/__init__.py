"""Table or view: every way the two kinds of tabular differ (events, errors, claims, read-model rows), in one place.

Tables and views share one name space per namespace and one lifecycle (create or register, rename, drop, soft
drop, undrop, expire, protect, release). Code on those paths holds a `TabularKind` and asks it, instead of
comparing a kind string (Lakekeeper's `TabularId` idea). The metadata logic that really differs (pyiceberg's
table updates against the view builder) stays in `catalog_es.metadata`.
"""

from __future__ import annotations

from catalog_es.events import TableEvent, ViewEvent
from catalog_es.tabular_kind.base import Adopted, SoftDrop, TabularKind
from catalog_es.tabular_kind.table import TableKind
from catalog_es.tabular_kind.view import ViewKind

__all__ = ["TABLE", "TABULAR_KINDS", "VIEW", "Adopted", "SoftDrop", "TabularKind", "kind_named", "kind_of"]

TABLE: TabularKind = TableKind()
VIEW: TabularKind = ViewKind()
TABULAR_KINDS: tuple[TabularKind, ...] = (TABLE, VIEW)
_BY_NAME: dict[str, TabularKind] = {kind.name: kind for kind in TABULAR_KINDS}


def kind_named(name: str) -> TabularKind:
    """The kind a row's or a request's `kind` names (`table` or `view`).

    Raises:
        KeyError: another name.
    """
    return _BY_NAME[name]


def kind_of(event: TableEvent | ViewEvent) -> TabularKind:
    """The kind whose stream an event of a table or a view belongs to."""
    return _BY_NAME[event.stream_kind]
