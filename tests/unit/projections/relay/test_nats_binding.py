"""The CloudEvents NATS binding and the Lakekeeper-compatible events, checked against the CloudEvents SDK."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import msgspec
import pytest
from cloudevents.core.bindings.common import decode_header_value, encode_header_value
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from catalog_es.store.eventstore import RecordedEvent
from projections.cloudevents import encode_structured
from projections.relay.binding import (
    STRUCTURED_CONTENT_TYPE,
    entity_and_action,
    message_position,
    subject_for,
    to_document,
    to_message,
)
from projections.relay.lakekeeper import TabularName, lakekeeper_id, lakekeeper_message

EVENT_ID = uuid.UUID("6f1c3a0e-1111-4222-8333-944445555666")
TABLE_ID = uuid.UUID(int=9)
WAREHOUSE_ID = uuid.UUID(int=8)
TIME = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
COMMITTED = {
    "table_id": str(TABLE_ID),
    "warehouse_id": str(WAREHOUSE_ID),
    "requirements": [{"type": "assert-create"}],
    "updates": [{"action": "set-properties", "updates": {"k": "v"}}],
    "previous_metadata_location": "file:///w/t/metadata/00000.json",
    "metadata_location": "file:///w/t/metadata/00001.json",
    "metadata": {"format-version": 2},
}


def _recorded(*, type_="io.catalog-es.table.committed.v1", data=None, actor="alice", stream_id=None) -> RecordedEvent:
    return RecordedEvent(
        position=42,
        id=EVENT_ID,
        source="/catalog-es",
        type=type_,
        subject=stream_id or f"table-{TABLE_ID}",
        time=TIME,
        datacontenttype="application/json",
        data=COMMITTED if data is None else data,
        extensions={"actor": actor, "requestid": "req-1"},
        stream_id=stream_id or f"table-{TABLE_ID}",
        stream_version=2,
        commit_id=uuid.UUID(int=1),
    )


def _sdk_from_nats_binary(headers: dict[str, str], payload: bytes) -> CloudEvent:
    """What a consumer using the SDK's header helpers reads from a binary-mode NATS message."""
    attributes = {
        name.removeprefix("ce-"): decode_header_value(name.removeprefix("ce-"), value)
        for name, value in headers.items()
        if name.startswith("ce-")
    }
    return CloudEvent(attributes, JSONFormat().read_data(payload, attributes.get("datacontenttype")))


def test_subject_names_warehouse_entity_action_and_id_when_event_is_a_table_commit():
    assert subject_for("catalog", _recorded()) == f"catalog.{WAREHOUSE_ID}.table.committed.{TABLE_ID}"


def test_subject_uses_underscore_for_the_warehouse_when_event_has_none():
    project_id = uuid.UUID(int=3)
    event = _recorded(
        type_="io.catalog-es.project.created.v1",
        data={"project_id": str(project_id), "name": "p"},
        stream_id=f"project-{project_id}",
    )
    assert subject_for("catalog", event) == f"catalog._.project.created.{project_id}"


@pytest.mark.parametrize(
    ("event_type", "expected"),
    [
        ("io.catalog-es.namespace.properties-updated.v1", ("namespace", "properties-updated")),
        ("io.catalog-es.view.renamed.v2", ("view", "renamed")),
        ("com.example.odd", ("_", "com.example.odd")),
    ],
)
def test_entity_and_action_come_from_the_type_name_when_it_is_ours(event_type, expected):
    assert entity_and_action(event_type) == expected


def test_subject_tokens_never_contain_wildcards_or_dots_when_the_type_is_foreign():
    event = _recorded(type_="com.example.odd>*", data={"warehouse_id": "a b"})
    prefix, warehouse, entity, action, entity_id = subject_for("catalog", event).split(".")
    assert (prefix, warehouse, entity, action, entity_id) == ("catalog", "a_b", "_", "com_example_odd__", str(TABLE_ID))


def test_binary_message_is_the_same_cloudevent_as_the_structured_document_when_read_with_the_sdk():
    event = _recorded()
    message = to_message(event, prefix="catalog", mode="binary")
    from_headers = _sdk_from_nats_binary(message.headers, message.payload)
    from_document = JSONFormat().read(None, encode_structured(event))
    assert from_headers.get_attributes() == {**from_document.get_attributes(), "position": "42"}
    assert from_headers.get_data() == from_document.get_data() == COMMITTED
    assert message.headers["Nats-Msg-Id"] == message.msg_id == str(EVENT_ID)
    assert message.headers["ce-datacontenttype"] == "application/json"  # NATS keeps the ce- form
    assert "Content-Type" not in message.headers


@pytest.mark.parametrize("actor", ['oidc~"quoted" name', "100% sure", "jürgen", "tab\there"])
def test_header_values_are_percent_encoded_and_sdk_decodes_them_when_actor_needs_it(actor):
    headers = to_message(_recorded(actor=actor), prefix="catalog", mode="binary").headers
    assert all(0x21 <= ord(char) < 0x7F for char in headers["ce-actor"])
    assert decode_header_value("actor", headers["ce-actor"]) == actor
    assert decode_header_value("actor", encode_header_value(actor)) == actor


def test_plain_header_values_travel_unencoded_when_they_are_printable_ascii():
    headers = to_message(_recorded(), prefix="catalog", mode="binary").headers
    assert headers["ce-source"] == "/catalog-es"
    assert headers["ce-time"] == "2025-03-04T05:06:07.891011Z"
    assert headers["ce-position"] == "42"


def test_structured_message_carries_the_json_document_and_its_content_type():
    event = _recorded()
    message = to_message(event, prefix="catalog", mode="structured")
    assert message.headers == {"Content-Type": STRUCTURED_CONTENT_TYPE, "Nats-Msg-Id": str(EVENT_ID)}
    assert msgspec.json.decode(message.payload) == msgspec.json.decode(encode_structured(event))


@pytest.mark.parametrize("mode", ["binary", "structured"])
def test_position_and_document_read_back_the_same_when_either_mode_was_sent(mode):
    event = _recorded()
    message = to_message(event, prefix="catalog", mode=mode)
    assert message_position(message.headers, message.payload) == 42
    assert to_document(message.headers, message.payload) == msgspec.json.decode(encode_structured(event))


def test_message_position_is_none_when_the_message_is_not_a_relayed_event():
    assert message_position({"Nats-Msg-Id": "x"}, b"{}") is None
    assert message_position(None, None) is None


@pytest.mark.parametrize("mode", ["binary", "structured"])
def test_data_is_left_out_and_flagged_when_omit_data_is_set(mode):
    message = to_message(_recorded(), prefix="catalog", mode=mode, omit_data=True)
    document = to_document(message.headers, message.payload)
    assert "data" not in document
    assert "datacontenttype" not in document
    assert document["dataomitted"] == "true"
    assert document["position"] == 42


def test_lakekeeper_event_has_its_type_extensions_and_commit_request_when_a_table_is_committed():
    event = _recorded()
    message = lakekeeper_message(event, subject="catalog.lakekeeper", name=TabularName(["db", "sales"], "orders"))
    document = msgspec.json.decode(message.payload)
    assert document["type"] == "updateTable"
    assert document["id"] == message.msg_id == lakekeeper_id(EVENT_ID) == message.headers["Nats-Msg-Id"]
    assert document["tabular-id"] == str(TABLE_ID)
    assert document["warehouse-id"] == document["prefix"] == str(WAREHOUSE_ID)
    assert (document["namespace"], document["name"]) == ("db.sales", "orders")
    assert document["actor"] == '{"type":"principal","principal":"alice"}'
    assert document["trace-id"] == "req-1"
    assert document["data"] == {
        "identifier": {"namespace": ["db", "sales"], "name": "orders"},
        "requirements": COMMITTED["requirements"],
        "updates": COMMITTED["updates"],
    }
    assert message.headers["Content-Type"] == STRUCTURED_CONTENT_TYPE
    assert message_position(message.headers, message.payload) == 42


def test_lakekeeper_id_is_stable_and_differs_from_the_event_id_when_derived_twice():
    assert lakekeeper_id(EVENT_ID) == lakekeeper_id(EVENT_ID) != str(EVENT_ID)


def test_lakekeeper_actor_is_anonymous_json_when_nobody_is_signed_in():
    message = lakekeeper_message(_recorded(actor="anonymous"), subject="s", name=TabularName(["db"], "t"))
    assert msgspec.json.decode(message.payload)["actor"] == '{"type":"anonymous"}'


def test_lakekeeper_event_is_create_view_with_the_current_version_when_a_view_is_created():
    view_id = uuid.UUID(int=11)
    metadata = {
        "location": "file:///w/v",
        "current-version-id": 1,
        "versions": [{"version-id": 1, "schema-id": 0, "representations": [{"type": "sql", "sql": "select 1"}]}],
        "schemas": [{"type": "struct", "schema-id": 0, "fields": []}],
        "properties": {"p": "1"},
    }
    event = _recorded(
        type_="io.catalog-es.view.created.v1",
        data={"view_id": str(view_id), "warehouse_id": str(WAREHOUSE_ID), "name": "v", "metadata": metadata},
        stream_id=f"view-{view_id}",
    )
    message = lakekeeper_message(event, subject="catalog.lakekeeper", name=TabularName(["db"], "v"))
    document = msgspec.json.decode(message.payload)
    assert (document["type"], document["tabular-type"], document["tabular-id"]) == ("createView", "view", str(view_id))
    assert document["data"] == {
        "name": "v",
        "location": "file:///w/v",
        "schema": metadata["schemas"][0],
        "view-version": metadata["versions"][0],
        "properties": {"p": "1"},
    }
