"""Stream ids are `<kind>-<uuid>` and a kind may hold a dash (`service-principal`): every reader splits them with
one function, at the UUID they end with, never at the first dash."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from catalog_es.events.access import ServicePrincipalRevoked
from catalog_es.events.base import split_stream_id
from catalog_es.store.eventstore import RecordedEvent
from projections.audit.history import history_streams
from projections.audit.iceberg_events import LoggedEvent
from projections.audit.iceberg_operations import operation
from projections.relay.binding import subject_for

CLIENT_ID = uuid.UUID("0b7e5b52-6f5a-4c51-9a0e-6e4c1f3d2a10")


def _recorded(stream_id: str, type_: str) -> RecordedEvent:
    return RecordedEvent(
        position=7,
        id=uuid.UUID(int=1),
        source="/catalog-es",
        type=type_,
        subject=stream_id,
        time=datetime(2026, 1, 1, tzinfo=UTC),
        datacontenttype="application/json",
        data={"client_id": str(CLIENT_ID)},
        extensions={"actor": "admin"},
        stream_id=stream_id,
        stream_version=2,
        commit_id=uuid.UUID(int=2),
    )


def test_split_stream_id_keeps_a_dashed_kind_whole_when_the_stream_is_a_service_principals() -> None:
    event = ServicePrincipalRevoked(client_id=CLIENT_ID)
    assert event.stream_id == f"service-principal-{CLIENT_ID}"
    assert split_stream_id(event.stream_id) == ("service-principal", str(CLIENT_ID))
    table = uuid.uuid4()
    assert split_stream_id(f"table-{table}") == ("table", str(table))


def test_split_stream_id_splits_at_the_first_dash_when_the_stream_does_not_end_with_a_uuid() -> None:
    assert split_stream_id("legacy-thing") == ("legacy", "thing")
    assert split_stream_id("nodash") == ("nodash", "")


def test_relay_subject_names_the_principal_when_the_event_is_a_service_principals() -> None:
    recorded = _recorded(f"service-principal-{CLIENT_ID}", ServicePrincipalRevoked.type_name)
    subject = subject_for("catalog", recorded)
    assert subject.endswith(f".{CLIENT_ID}")
    assert "principal-" not in subject


def test_custom_operation_names_the_principal_when_the_event_is_a_service_principals() -> None:
    recorded = _recorded(f"service-principal-{CLIENT_ID}", ServicePrincipalRevoked.type_name)
    logged = LoggedEvent(
        recorded=recorded, namespace=None, name=None, source_namespace=None, source_name=None, commit_event_count=1
    )
    body = operation(logged)
    assert body["service-principal-uuid"] == str(CLIENT_ID)
    assert "service-uuid" not in body


def test_history_streams_add_the_maintenance_stream_when_the_stream_is_a_tables() -> None:
    table = uuid.uuid4()
    assert history_streams(f"table-{table}") == [f"table-{table}", f"maintenance-{table}"]
    assert history_streams(f"service-principal-{CLIENT_ID}") == [f"service-principal-{CLIENT_ID}"]
