"""A stream id's entity is read after its whole kind: kinds such as `service-principal` hold dashes themselves."""

from __future__ import annotations

import uuid

from projections.changed_streams import stream_entity

CLIENT = uuid.UUID("0b6c3d1e-8f51-4d8a-9b57-2f1f0a6f4c11")


def test_stream_entity_reads_the_id_after_a_kind_with_dashes() -> None:
    assert stream_entity(f"service-principal-{CLIENT}", "service-principal") == CLIENT
    assert stream_entity(f"warehouse-{CLIENT}", "warehouse") == CLIENT


def test_stream_entity_is_none_when_the_stream_is_of_another_kind() -> None:
    assert stream_entity(f"service-principal-{CLIENT}", "service") is None  # "principal-<uuid>" is no id
    assert stream_entity(f"warehouse-{CLIENT}", "service-principal") is None
    assert stream_entity("warehouse-not-a-uuid", "warehouse") is None
