"""The CloudEvents 1.0 structured-mode mapping, checked against the CloudEvents SDK's own parser."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone

import msgspec
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from catalog_es.store.eventstore import RecordedEvent
from projections.cloudevents import encode_structured, to_cloudevent

EVENT_ID = uuid.UUID("6f1c3a0e-1111-4222-8333-944445555666")
COMMIT_ID = uuid.UUID("0b6c0e2a-aaaa-4bbb-8ccc-9ddddeeeefff")
TIME = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
DATA = {"namespace_id": str(uuid.UUID(int=7)), "warehouse_id": str(uuid.UUID(int=8)), "namespace": ["a"]}


def _recorded(*, extensions=None, subject="namespace-x", time=TIME, position=42) -> RecordedEvent:
    return RecordedEvent(
        position=position,
        id=EVENT_ID,
        source="/catalog-es",
        type="io.catalog-es.namespace.created.v1",
        subject=subject,
        time=time,
        datacontenttype="application/json",
        data=DATA,
        extensions={"actor": "alice", "requestid": "req-1"} if extensions is None else extensions,
        stream_id="namespace-x",
        stream_version=1,
        commit_id=COMMIT_ID,
    )


def test_encode_structured_has_every_attribute_when_extensions_are_known():
    document = msgspec.json.decode(encode_structured(_recorded()))
    assert document == {
        "specversion": "1.0",
        "id": str(EVENT_ID),
        "source": "/catalog-es",
        "type": "io.catalog-es.namespace.created.v1",
        "subject": "namespace-x",
        "time": "2025-03-04T05:06:07.891011Z",
        "datacontenttype": "application/json",
        "data": DATA,
        "position": 42,
        "actor": "alice",
        "requestid": "req-1",
    }
    assert type(document["position"]) is int


def test_encode_structured_omits_requestid_when_unknown():
    document = msgspec.json.decode(encode_structured(_recorded(extensions={"actor": "bob"})))
    assert "requestid" not in document
    assert document["actor"] == "bob"


def test_encode_structured_defaults_actor_to_anonymous_when_extensions_are_empty():
    document = msgspec.json.decode(encode_structured(_recorded(extensions={})))
    assert document["actor"] == "anonymous"


def test_encode_structured_omits_subject_when_event_has_none():
    document = msgspec.json.decode(encode_structured(_recorded(subject=None)))
    assert "subject" not in document
    assert document["specversion"] == "1.0"


def test_to_cloudevent_keeps_offset_when_time_is_not_utc():
    moment = datetime(2025, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert to_cloudevent(_recorded(time=moment)).time == "2025-01-01T12:00:00+02:00"


def test_sdk_parses_structured_document_with_extensions_intact_when_read():
    event = JSONFormat().read(None, encode_structured(_recorded()))
    assert isinstance(event, CloudEvent)
    assert event.get_specversion() == "1.0"
    assert event.get_id() == str(EVENT_ID)
    assert event.get_source() == "/catalog-es"
    assert event.get_type() == "io.catalog-es.namespace.created.v1"
    assert event.get_subject() == "namespace-x"
    assert event.get_time() == TIME
    assert event.get_datacontenttype() == "application/json"
    assert event.get_data() == DATA
    assert event.get_extension("position") == 42
    assert type(event.get_extension("position")) is int
    assert event.get_extension("actor") == "alice"
    assert event.get_extension("requestid") == "req-1"


def test_sdk_parses_document_when_subject_and_requestid_are_absent():
    event = JSONFormat().read(None, encode_structured(_recorded(subject=None, extensions={"actor": "bob"})))
    assert event.get_subject() is None
    assert event.get_extension("requestid") is None
    assert event.get_extension("actor") == "bob"
    assert event.get_extension("position") == 42


def test_sdk_round_trips_document_when_written_back():
    fmt = JSONFormat()
    original = msgspec.json.decode(encode_structured(_recorded()))
    assert msgspec.json.decode(fmt.write(fmt.read(None, encode_structured(_recorded())))) == original
