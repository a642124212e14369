"""A commit's canonical JSON spliced from its base's is the whole encoding, byte for byte: random commits, v1 to v3."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.encoded_document import encode_document
from catalog_es.metadata.table_changes import encode_metadata
from catalog_es.metadata.tables import commit
from catalog_es.state import TabularRow
from commands.commit_table import prepare_commit
from tests.unit.catalog_es.metadata.test_commit_cache import _table, _updates


def _spans_hold(document: dict[str, Any], encoded: Any) -> bool:
    return all(
        bytes(encoded.encoded[start:end]) == encode_metadata({"x": document[key]})[5:-1]
        for key, (start, end) in encoded.spans.items()
    )


@pytest.mark.parametrize("format_version", ["1", "2", "3"])
@pytest.mark.parametrize("seed", range(4))
def test_a_document_encoded_from_its_base_equals_the_whole_encoding(format_version: str, seed: int) -> None:
    rng = random.Random(seed)
    base, document = _table(format_version)
    encoded = encode_document(document)
    location = "file:///w/t/metadata/00000-a.metadata.json"
    for step in range(60):
        updated = commit(base, location, [], _updates(base, rng, step), now_ms=2_000 + step)
        if format_version != "3" and step == 45:  # a format upgrade: every member is new
            updated = commit(
                updated, location, [], [{"action": "upgrade-format-version", "format-version": 3}], now_ms=9
            )
        after = document_after(base, document, updated)
        following = encode_document(after, document, encoded)
        assert following.encoded == encode_metadata(after), f"step {step}"
        assert _spans_hold(after, following), f"step {step}"
        base, document, encoded = updated, after, following
        location = f"file:///w/t/metadata/{step + 1:05d}-a.metadata.json"
    assert len(base.snapshots) > 3  # the sequence did build up history


def test_the_base_members_and_list_elements_a_document_shares_are_copied_from_the_base_bytes_not_encoded() -> None:
    elements = [{"id": 1}, {"id": 2}]
    base = {"kept": {"a": 1}, "grown": elements, "changed": 1}
    real = encode_document(base)
    # The base's bytes told apart from a fresh encoding: what is copied shows the marks.
    marked = real._replace(encoded=real.encoded.replace(b'"a":1', b'"a":7').replace(b'"id":1', b'"id":8'))
    document = {"kept": base["kept"], "grown": [*elements, {"id": 3}], "changed": 2}

    spliced = encode_document(document, base, marked)

    assert spliced.encoded == b'{"changed":2,"grown":[{"id":8},{"id":2},{"id":3}],"kept":{"a":7}}'


def test_members_equal_to_the_base_but_not_the_same_objects_are_encoded_afresh() -> None:
    base = {"a": 1, "b": [1, 2], "c": {"z": 1, "a": [True]}, "d": [{"k": 1}], "gone": 0}
    encoded = encode_document(base)
    document = {"a": 1.0, "b": [True, 2, 3], "c": {"z": 1, "a": [1]}, "d": [*base["d"], {"k": 2.5}], "new": "é"}

    spliced = encode_document(document, base, encoded)

    assert spliced.encoded == encode_metadata(document)
    assert spliced.encoded == b'{"a":1.0,"b":[true,2,3],"c":{"a":[1],"z":1},"d":[{"k":1},{"k":2.5}],"new":"\xc3\xa9"}'
    assert _spans_hold(document, spliced)


def test_a_shrunk_list_an_emptied_list_and_an_empty_base_list_are_encoded_whole() -> None:
    elements = [{"id": i} for i in range(4)]
    base = {"s": elements, "t": elements, "u": []}
    encoded = encode_document(base)
    document = {"s": elements[1:], "t": [], "u": [{"id": 9}]}

    assert encode_document(document, base, encoded).encoded == encode_metadata(document)


def test_a_commit_keeps_its_encoding_for_the_next_and_gives_the_bytes_of_the_whole_encoding() -> None:
    metadata, document = _table("2")
    documents = MetadataDocuments()
    location = "file:///w/t/metadata/00000-a.metadata.json"
    documents.remember(location, document, metadata)
    rng = random.Random(3)
    for step in range(20):
        current = _row(location, documents.document(location))
        prepared = prepare_commit(current, [], _updates(documents.parsed(location), rng, step), 5_000 + step, documents)
        assert prepared is not None
        assert prepared.encoded == encode_metadata(prepared.document), f"step {step}"
        kept = documents.encoded(prepared.metadata_location, prepared.document)
        assert kept is not None
        assert kept.encoded == prepared.encoded
        assert documents.encoded(prepared.metadata_location, dict(prepared.document)) is None  # that object only
        location = prepared.metadata_location


def _row(location: str, document: Any) -> TabularRow:
    return TabularRow(
        id=uuid.UUID(int=7),
        warehouse_id=uuid.UUID(int=1),
        namespace_id=uuid.UUID(int=2),
        namespace=["db"],
        name="t",
        location="file:///w/t",
        metadata_location=location,
        metadata=document,
        version=1,
        kind="table",
    )
