"""Table metadata that finds a snapshot by id in a dict: pyiceberg's update functions scan the whole list for it.

pyiceberg's `snapshot_by_id` walks `snapshots` in Python, and a fast append calls it twice (`add-snapshot` checks
the id is new, `set-snapshot-ref` finds the snapshot), so a commit's own work grew with the table's history. The
models `indexed` returns answer from an index they share with the models their updates copy: an update that appends
snapshots extends it in place, so a table's commits index each snapshot once. Same fields, same dump, same answers
(the first snapshot with the id, as pyiceberg's scan).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.snapshots import Snapshot

_HELD = "_catalog_snapshot_index"  # a key of the model's `__dict__` that no field has (pydantic skips `_` names)


class _Index:
    """Snapshots in order and the position of each id's first one; the snapshot lists of the models sharing it are
    prefixes of `order` (the same snapshots: an update's copy shares the very objects)."""

    def __init__(self) -> None:
        self.order: list[Snapshot] = []
        self.position: dict[int, int] = {}

    def extend(self, snapshots: list[Snapshot]) -> None:
        for snapshot in snapshots:
            self.position.setdefault(snapshot.snapshot_id, len(self.order))
            self.order.append(snapshot)


class _Held:
    """The index a model shares and its list checked to be a prefix of `index.order`; equal to any other, so that
    models compare by their fields alone (pydantic compares `__dict__` first)."""

    __slots__ = ("index", "snapshots")

    def __init__(self, index: _Index, snapshots: list[Snapshot]) -> None:
        self.index, self.snapshots = index, snapshots

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Held)

    __hash__ = None  # type: ignore[assignment]


class _IndexedSnapshots:
    """Mixed in before a pyiceberg metadata class: its `snapshot_by_id` through the shared index."""

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        snapshots: list[Snapshot] = self.snapshots  # type: ignore[attr-defined]
        position = _index_of(self, snapshots).position.get(snapshot_id)
        return snapshots[position] if position is not None and position < len(snapshots) else None


def _index_of(metadata: _IndexedSnapshots, snapshots: list[Snapshot]) -> _Index:
    """The index `metadata` shares (a copy made by an update carries its base's), checked against its list."""
    held: _Held | None = metadata.__dict__.get(_HELD)
    if held is not None and held.snapshots is snapshots:
        return held.index
    index = held.index if held is not None else None
    if index is None or not leading_equal(snapshots, index.order):  # not a prefix: e.g. snapshots removed
        index = _Index()
        index.extend(snapshots)
    elif len(snapshots) > len(index.order):  # snapshots appended (the same objects before them)
        index.extend(snapshots[len(index.order) :])
    metadata.__dict__[_HELD] = _Held(index, snapshots)
    return index


def leading_equal(longer: list[Any], shorter: list[Any]) -> bool:
    """Whether the lists agree as far as both go, compared in C: list equality skips identical elements without
    calling `__eq__` (so a list grown by an update compares at the cost of a copy, not of a call per element)."""
    if len(longer) < len(shorter):
        longer, shorter = shorter, longer
    return longer[: len(shorter)] == shorter


def indexed(metadata: TableMetadata) -> TableMetadata:
    """`metadata` as a model of its class with the index (the same field values; itself when it has it already)."""
    if isinstance(metadata, _IndexedSnapshots):
        return metadata
    model: Any = _indexed_class(type(metadata))
    copy: TableMetadata = model.model_construct(_fields_set=metadata.model_fields_set, **dict(metadata))
    return copy


@cache
def _indexed_class(base: type[Any]) -> type[Any]:
    base_equals: Callable[[Any, object], bool] = base.__eq__  # type: ignore[assignment] # unbound: self first

    def equals(self: Any, other: object) -> bool:  # equal to the plain model with the same fields, either way round
        return base_equals(self, indexed(other) if type(other) is base else other)  # type: ignore[arg-type]

    namespace = {"__module__": __name__, "__eq__": equals, "__hash__": base.__hash__}
    return type(f"Indexed{base.__name__}", (_IndexedSnapshots, base), namespace)
