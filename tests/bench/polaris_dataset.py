"""The Polaris benchmark "tree" dataset as a pure function: namespaces, tables and views by ordinal."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TreeShape:
    """A complete N-ary namespace tree of depth D; T tables and V views per leaf (Polaris defaults 2, 4, 5, 3)."""

    breadth: int = 2
    depth: int = 4
    tables_per_leaf: int = 5
    views_per_leaf: int = 3
    columns: int = 10
    properties: int = 10

    @classmethod
    def scaled(cls, tables: int) -> TreeShape:
        """The default tree with enough tables per leaf for `tables` tables (e.g. 100 000)."""
        base = cls()
        leaves = base.breadth ** (base.depth - 1)
        return cls(tables_per_leaf=max(1, math.ceil(tables / leaves)))


@dataclass(frozen=True)
class Dataset:
    namespaces: list[list[str]]  # breadth-first: parents before children
    leaves: list[list[str]]
    tables: list[tuple[list[str], str]]
    views: list[tuple[list[str], str]]


def _path(ordinal: int, breadth: int) -> list[str]:
    parts = [f"NS_{ordinal}"]
    while ordinal > 0:
        ordinal = (ordinal - 1) // breadth
        parts.append(f"NS_{ordinal}")
    return list(reversed(parts))


def tree_dataset(shape: TreeShape) -> Dataset:
    """Root 0; children of p are p*N+1 .. p*N+N; tables T_i and views V_i only in leaves, numbered leaf by leaf."""
    count = shape.depth if shape.breadth == 1 else (shape.breadth**shape.depth - 1) // (shape.breadth - 1)
    namespaces = [_path(ordinal, shape.breadth) for ordinal in range(count)]
    leaf_count = shape.breadth ** (shape.depth - 1)
    leaves = namespaces[count - leaf_count :]
    tables = [
        (leaf, f"T_{i * shape.tables_per_leaf + t}")
        for i, leaf in enumerate(leaves)
        for t in range(shape.tables_per_leaf)
    ]
    views = [
        (leaf, f"V_{i * shape.views_per_leaf + v}")
        for i, leaf in enumerate(leaves)
        for v in range(shape.views_per_leaf)
    ]
    return Dataset(namespaces=namespaces, leaves=leaves, tables=tables, views=views)


def schema(columns: int) -> dict[str, object]:
    """`column1..columnC`, all required ints, identifier field [1]."""
    fields = [{"id": i, "name": f"column{i}", "type": "int", "required": True} for i in range(1, columns + 1)]
    return {"type": "struct", "schema-id": 0, "fields": fields, "identifier-field-ids": [1]}


def initial_properties(count: int) -> dict[str, str]:
    return {f"InitialAttribute_{i}": str(i) for i in range(count)}
