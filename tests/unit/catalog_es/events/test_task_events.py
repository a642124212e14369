"""Task events: stored and read back, filed on the task's own stream, published under their warehouse."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from catalog_es.events import decode_event, event_data
from catalog_es.events.tasks import TaskQueueConfigured, TaskScheduled, TaskStarted, queue_config_uuid
from catalog_es.store.eventstore import RecordedEvent
from projections.relay.binding import subject_for

TASK_ID, WAREHOUSE_ID, TABLE_ID = uuid.UUID(int=1), uuid.UUID(int=2), uuid.UUID(int=3)


def _recorded(event: TaskStarted | TaskQueueConfigured) -> RecordedEvent:
    return RecordedEvent(
        position=1,
        id=uuid.UUID(int=9),
        source="/catalog-es",
        type=event.type_name,
        subject=event.stream_id,
        time=datetime(2030, 1, 1, tzinfo=UTC),
        datacontenttype="application/json",
        data=event_data(event),
        extensions={"actor": "system"},
        stream_id=event.stream_id,
        stream_version=2,
        commit_id=uuid.UUID(int=8),
    )


def test_task_scheduled_keeps_task_stream_when_it_names_the_table_it_acts_on():
    event = TaskScheduled(
        task_id=TASK_ID,
        warehouse_id=WAREHOUSE_ID,
        queue="tabular_purge",
        entity_type="table",
        entity_id=TABLE_ID,
        payload={"location": "file:///w/t"},
        due_at_ms=5,
        max_attempts=3,
    )
    assert event.stream_id == f"task-{TASK_ID}"
    assert decode_event(event.type_name, event_data(event)) == event
    assert event_data(event)["entity_id"] == str(TABLE_ID)


def test_subject_names_warehouse_and_task_when_event_is_a_task_start():
    event = TaskStarted(task_id=TASK_ID, warehouse_id=WAREHOUSE_ID, attempt=1, worker="host:1")
    assert subject_for("catalog", _recorded(event)) == f"catalog.{WAREHOUSE_ID}.task.started.{TASK_ID}"


def test_queue_configuration_has_one_stream_per_warehouse_and_queue():
    purge = TaskQueueConfigured(warehouse_id=WAREHOUSE_ID, queue="tabular_purge", config={})
    other = TaskQueueConfigured(warehouse_id=WAREHOUSE_ID, queue="tabular_expiration", config={})
    stream_uuid = queue_config_uuid(WAREHOUSE_ID, "tabular_purge")
    assert purge.stream_id == f"queueconfig-{stream_uuid}"
    assert purge.stream_id != other.stream_id
    assert subject_for("catalog", _recorded(purge)) == f"catalog.{WAREHOUSE_ID}.task-queue.configured.{stream_uuid}"
