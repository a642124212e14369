"""TabularKind: each kind's events are its own stream's and keep their stored type names; its errors and claims."""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
import pytest

from catalog_es.errors import BadRequestError, NoSuchTableError, NoSuchViewError
from catalog_es.events import Event, TableEvent, ViewEvent
from catalog_es.identifiers import Namespace
from catalog_es.state import TabularRow
from catalog_es.tabular_kind import TABLE, TABULAR_KINDS, VIEW, SoftDrop, TabularKind, kind_named, kind_of

ID, WAREHOUSE, NAMESPACE, TASK = (uuid.UUID(int=n) for n in (1, 2, 3, 4))
DB = Namespace(("db",))


def _row(kind: TabularKind) -> TabularRow:
    return TabularRow(ID, WAREHOUSE, NAMESPACE, ["db"], "t", "file:///w/t", "file:///w/t/m.json", {}, 1, kind.name)


def _every_event(kind: TabularKind) -> dict[str, Event]:
    drop = SoftDrop(
        tabular_id=ID,
        warehouse_id=WAREHOUSE,
        namespace_id=NAMESPACE,
        name="t",
        expires_at_ms=5,
        purge_requested=True,
        expiration_task_id=TASK,
    )
    return {
        "registered": kind.registered(ID, WAREHOUSE, NAMESPACE, "t", "file:///w/t/m.json", {}),
        "renamed": kind.renamed(_row(kind), NAMESPACE, "u"),
        "dropped": kind.dropped(ID, WAREHOUSE, purge=True),
        "soft-dropped": kind.soft_dropped(drop),
        "undropped": kind.undropped(ID, WAREHOUSE, NAMESPACE, "u", from_name="t"),
        "expired": kind.expired(ID, WAREHOUSE, purge=True),
        "protection-set": kind.protection_set(ID, WAREHOUSE, protected=True),
    }


def _fields(event: Event) -> dict[str, Any]:
    return msgspec.structs.asdict(event)


@pytest.mark.parametrize("kind", TABULAR_KINDS, ids=repr)
def test_every_event_is_on_the_kinds_stream_with_its_stored_type_name_when_built_by_the_kind(kind: TabularKind) -> None:
    for action, event in _every_event(kind).items():
        assert isinstance(event, TableEvent | ViewEvent)
        assert kind_of(event) is kind
        assert event.type_name == f"io.catalog-es.{kind.name}.{action}.v1"  # stored names never change
        assert event.stream_id == kind.stream_id(ID)
        assert event.warehouse_id == WAREHOUSE


def test_purge_is_recorded_when_a_table_is_dropped_or_expires() -> None:
    events = _every_event(TABLE)
    assert [_fields(events[a])["purge_requested"] for a in ("dropped", "soft-dropped", "expired")] == [True] * 3


def test_view_events_carry_no_purge_when_the_drop_asked_for_one() -> None:
    events = _every_event(VIEW)
    assert "purge_requested" not in _fields(events["dropped"])
    assert "purge_requested" not in _fields(events["expired"])
    assert _fields(events["soft-dropped"])["purge_requested"] is False


def test_soft_drop_keeps_task_and_name_when_built_by_either_kind() -> None:
    for kind in TABULAR_KINDS:
        fields = _fields(_every_event(kind)["soft-dropped"])
        assert (fields["name"], fields["expiration_task_id"]) == ("t", TASK)


def test_kind_named_finds_each_kind_when_given_its_name() -> None:
    assert [kind_named(kind.name) for kind in TABULAR_KINDS] == [TABLE, VIEW]
    with pytest.raises(KeyError):
        kind_named("namespace")


@pytest.mark.parametrize(
    ("creating", "holder", "message"),
    [
        (TABLE, TABLE, "Table already exists: db.t"),
        (TABLE, VIEW, "View with same name already exists: db.t"),
        (VIEW, TABLE, "Table with same name already exists: db.t"),
        (VIEW, VIEW, "View already exists: db.t"),
    ],
)
def test_name_taken_is_worded_as_iceberg_when_the_holder_is_of_either_kind(
    creating: TabularKind, holder: TabularKind, message: str
) -> None:
    assert str(creating.name_taken(DB, "t", holder)) == message


def test_missing_is_the_kinds_not_found_error_when_asked() -> None:
    assert isinstance(TABLE.missing(DB, "t"), NoSuchTableError)
    assert isinstance(VIEW.missing(DB, "t"), NoSuchViewError)
    assert str(VIEW.missing(DB, "t")) == "View does not exist: db.t"


def test_only_a_table_claims_its_location_and_can_be_purged() -> None:
    assert (TABLE.claims_location, TABLE.purgeable) == (True, True)
    assert (VIEW.claims_location, VIEW.purgeable) == (False, False)


def test_parse_adopted_refuses_a_document_when_it_is_not_of_the_kind() -> None:
    with pytest.raises(BadRequestError, match="not a valid view metadata file"):
        VIEW.parse_adopted({"format-version": 2, "location": "file:///w/t"}, "file:///w/t/m.json")
    with pytest.raises(BadRequestError, match="not a table metadata file: not a JSON object"):
        TABLE.parse_adopted([], "file:///w/t/m.json")  # type: ignore[arg-type]
