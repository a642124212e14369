"""The scan-planning mode's precedence: a table's property over its warehouse's mode over the server's setting."""

from __future__ import annotations

import msgspec
import pytest

from catalog_es.planning.mode import PLANNING_MODE_PROPERTY, document_mode, table_mode, warehouse_mode


def test_warehouse_mode_wins_over_server_setting_when_set() -> None:
    assert warehouse_mode("client", "server") == "server"
    assert warehouse_mode("server", "client") == "client"
    assert warehouse_mode("server", None) == "server"


@pytest.mark.parametrize(
    ("value", "expected"), [("server", "server"), (" Client ", "client"), ("sometimes", "server"), ("", "server")]
)
def test_table_property_wins_over_inherited_mode_when_it_names_one(value: str, expected: str) -> None:
    assert table_mode("server", {PLANNING_MODE_PROPERTY: value}) == expected


def test_document_mode_reads_the_property_from_a_stored_document() -> None:
    named = msgspec.json.encode({"format-version": 2, "properties": {PLANNING_MODE_PROPERTY: "server"}})
    assert document_mode("client", named) == "server"
    assert document_mode("client", b'{"format-version": 2, "properties": {"owner": "me"}}') == "client"
    assert document_mode("server", b'{"format-version": 2}') == "server"
