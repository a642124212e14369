"""Protection events: stable type names in the registry, decoded back, and routed by the relay like any event."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from catalog_es.events import EVENT_TYPES, decode_event, event_data
from catalog_es.events.protection import NamespaceProtectionSet, TableProtectionSet, WarehouseProtectionSet
from catalog_es.store.eventstore import RecordedEvent
from projections.relay.binding import subject_for

WAREHOUSE, TABLE = uuid.UUID(int=8), uuid.UUID(int=9)


def test_protection_events_round_trip_through_the_registry_with_their_stream():
    event = TableProtectionSet(table_id=TABLE, warehouse_id=WAREHOUSE, protected=True)
    assert EVENT_TYPES["io.catalog-es.table.protection-set.v1"] is TableProtectionSet
    assert decode_event(event.type_name, event_data(event)) == event
    assert event.stream_id == f"table-{TABLE}"  # the table's own stream: serialised with its drop
    namespace = NamespaceProtectionSet(namespace_id=uuid.UUID(int=3), warehouse_id=WAREHOUSE, protected=False)
    assert namespace.stream_id == f"namespace-{uuid.UUID(int=3)}"
    warehouse = WarehouseProtectionSet(warehouse_id=WAREHOUSE, project_id=uuid.UUID(int=0), protected=True)
    assert warehouse.stream_id == f"warehouse-{WAREHOUSE}"


def test_relay_subject_names_warehouse_entity_and_protection_set_action():
    event = TableProtectionSet(table_id=TABLE, warehouse_id=WAREHOUSE, protected=True)
    recorded = RecordedEvent(
        position=7,
        id=uuid.UUID(int=1),
        source="/catalog-es",
        type=event.type_name,
        subject=event.stream_id,
        time=datetime(2026, 1, 1, tzinfo=UTC),
        datacontenttype="application/json",
        data=event_data(event),
        extensions={"actor": "alice"},
        stream_id=event.stream_id,
        stream_version=4,
        commit_id=uuid.UUID(int=2),
    )
    assert subject_for("catalog", recorded) == f"catalog.{WAREHOUSE}.table.protection-set.{TABLE}"
