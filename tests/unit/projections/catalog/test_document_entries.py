"""A table document's history lists as rows: the head stored without them, a list's change from its base."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from catalog_es.metadata.encoded_document import encode_document
from projections.catalog.document_entries import HISTORY_LISTS, ListChange, document_head, head_json, list_change


def _applied(base: list[Any], change: ListChange) -> list[Any]:
    """What the rows hold after the change: base minus removed, replaced in place, then appended."""
    replaced = dict(change.replaced)
    removed = set(change.removed)
    kept = [replaced.get(i, element) for i, element in enumerate(base) if i not in removed]
    return kept + change.appended


def test_a_grown_list_only_appends():
    base = [{"id": i} for i in range(5)]
    assert list_change(base, [*base, {"id": 5}]) == ListChange([], [], [{"id": 5}])


def test_a_log_trimmed_from_the_front_removes_its_first_elements():
    base = [{"file": i} for i in range(4)]
    assert list_change(base, [*base[2:], {"file": 4}]) == ListChange([0, 1], [], [{"file": 4}])


def test_expired_snapshots_are_removed_and_the_one_after_them_replaced():
    base = [{"id": 1}, {"id": 2, "parent": 1}, {"id": 3, "parent": 2}, {"id": 4, "parent": 3}]
    new = [{"id": 1}, {"id": 3}, {"id": 4, "parent": 3}]  # Iceberg drops the parent id of an expired snapshot
    assert list_change(base, new) == ListChange([1], [(2, {"id": 3})], [])


def test_any_change_rebuilds_the_new_list():
    rng = random.Random(7)
    for _ in range(500):
        base = [rng.randrange(6) for _ in range(rng.randrange(8))]
        new = [rng.randrange(6) for _ in range(rng.randrange(8))]
        if rng.random() < 0.5:  # often a subsequence with a tail, as commits make
            new = [e for e in base if rng.random() < 0.7] + new[:2]
        assert _applied(base, list_change(base, new)) == new, (base, new)


@pytest.mark.parametrize("lists", [HISTORY_LISTS, ("snapshots",), ()])
def test_the_head_cut_from_the_canonical_json_is_the_head_encoded(lists):
    document: dict[str, Any] = {"format-version": 2, "location": "s3://b/t", "z-last": {"a": [1, 2]}}
    for key in lists:
        document[key] = [{"n": i, "key": key} for i in range(3)]
    document["refs"] = {"main": {"snapshot-id": 1}}
    head = head_json(document, encode_document(document))
    assert msgspec.json.decode(head) == document_head(document)
    assert msgspec.json.decode(head_json(document, None)) == document_head(document)
    assert all(document_head(document)[key] == [] for key in lists)
    assert document_head({"snapshots": None}) == {"snapshots": None}  # not a list: stays in the head
