"""Event identity: entity and action come from the stable type name once, and the registry answers by them."""

from __future__ import annotations

import pytest

from catalog_es.events import Event, NamespacePropertiesUpdated, TableCommitted, ViewRenamed
from catalog_es.events.registry import EVENT_TYPES, full_type, short_type, types_of


def test_entity_and_action_are_the_parts_of_the_type_name_when_the_class_is_defined():
    assert (TableCommitted.entity, TableCommitted.action) == ("table", "committed")
    assert (NamespacePropertiesUpdated.entity, NamespacePropertiesUpdated.action) == ("namespace", "properties-updated")
    assert all(name.startswith(f"io.catalog-es.{cls.entity}.{cls.action}.v") for name, cls in EVENT_TYPES.items())


def test_event_class_is_refused_at_definition_when_its_type_name_is_not_ours():
    with pytest.raises(TypeError, match=r"not io\.catalog-es"):

        class Odd(Event, frozen=True, kw_only=True):
            type_name = "com.example.odd"


def test_short_and_full_type_round_trip_when_the_type_is_known():
    assert short_type(ViewRenamed.type_name) == "view.renamed"
    assert full_type("view.renamed") == ViewRenamed.type_name
    assert full_type(ViewRenamed.type_name) == ViewRenamed.type_name
    assert short_type("com.example.odd") == "com.example.odd"
    assert full_type("view.exploded") is None


def test_types_of_lists_an_entitys_types_when_actions_narrow_them():
    assert types_of("view", "renamed", "dropped") == ["io.catalog-es.view.renamed.v1", "io.catalog-es.view.dropped.v1"]
    assert (
        len(types_of("table")) == 11
    )  # five catalog events (committed in v2 and v1), four soft-deletion ones, protection-set
    assert types_of("table", "protection-set") == ["io.catalog-es.table.protection-set.v1"]
    assert types_of("nothing") == []
