"""Projections declare the events they take; the registry hands them only those, retired versions included."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from catalog_es.events import PrivilegeGranted, TableCommitted, TableCreated
from catalog_es.store.eventstore import RecordedEvent
from projections.registry import CATALOG, PERMISSIONS, PROJECTIONS, SEARCH, Projection
from projections.topics import stored_type_names


def _recorded(position: int, type_name: str) -> RecordedEvent:
    return RecordedEvent(
        id=uuid.uuid4(),
        position=position,
        stream_id=f"table-{uuid.uuid4()}",
        stream_version=1,
        type=type_name,
        source="/test",
        subject=None,
        time=datetime.now(UTC),
        data={},
        datacontenttype="application/json",
        extensions={},
        commit_id=uuid.uuid4(),
    )


def test_a_topic_reads_its_retired_type_names_too() -> None:
    assert stored_type_names([TableCommitted]) == {TableCommitted.type_name, "io.catalog-es.table.committed.v1"}


def test_dispatching_projectors_take_what_they_register_for() -> None:
    assert PERMISSIONS.topics is not None
    assert PrivilegeGranted in PERMISSIONS.topics
    assert TableCommitted not in PERMISSIONS.topics  # a commit changes no grant: never decoded for permissions
    assert SEARCH.topics is not None
    assert TableCreated in SEARCH.topics
    assert TableCommitted not in SEARCH.topics
    assert CATALOG.topics is not None
    assert PrivilegeGranted not in CATALOG.topics


def test_project_hands_apply_only_its_topics_in_log_order_and_skips_a_batch_without_any() -> None:
    batches: list[list[int]] = []

    async def apply(conn: Any, events: Sequence[RecordedEvent]) -> None:
        batches.append([event.position for event in events])

    projection = Projection("probe", (), (), apply, (TableCommitted,))
    mixed = [
        _recorded(1, TableCreated.type_name),
        _recorded(2, "io.catalog-es.table.committed.v1"),
        _recorded(3, PrivilegeGranted.type_name),
        _recorded(4, TableCommitted.type_name),
    ]
    asyncio.run(projection.project(None, mixed))  # type: ignore[arg-type] # no SQL: the probe ignores the connection
    asyncio.run(projection.project(None, mixed[:1]))  # type: ignore[arg-type]

    assert batches == [[2, 4]]


def test_projections_without_topics_take_every_event() -> None:
    assert {p.name for p in PROJECTIONS if p.topics is None} == {"catalog_statistics", "log_chain"}
