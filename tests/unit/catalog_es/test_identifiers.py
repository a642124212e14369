"""Namespace identifiers: URL form, case-insensitive keys, parents, name validation."""

from __future__ import annotations

import pytest

from catalog_es.identifiers import NAMESPACE_SEPARATOR, Namespace, name_key, validate_name


def test_from_path_splits_parts_when_joined_by_unit_separator():
    assert Namespace.from_path("a\x1fB\x1fc").parts == ("a", "B", "c")


def test_from_path_keeps_dots_when_part_contains_one():
    assert Namespace.from_path("a.b").parts == ("a.b",)


def test_from_path_gives_one_part_when_no_separator():
    assert Namespace.from_path("sales").parts == ("sales",)


def test_key_is_equal_when_parts_differ_only_in_case():
    assert Namespace(("Sales", "EU")).key == Namespace(("sales", "eu")).key


def test_key_differs_when_parts_differ_beyond_case():
    assert Namespace(("sales", "eu")).key != Namespace(("sales", "us")).key


def test_key_keeps_levels_apart_when_names_contain_dots():
    assert Namespace(("a.b",)).key != Namespace(("a", "b")).key
    assert Namespace(("a", "b")).key == f"a{NAMESPACE_SEPARATOR}b"


def test_key_casefolds_when_name_has_special_case_mapping():
    assert name_key("STRASSE") == name_key("straße")


def test_parts_preserve_case_when_key_is_folded():
    namespace = Namespace.from_path("Sales\x1fEU")
    assert namespace.parts == ("Sales", "EU")
    assert str(namespace) == "Sales.EU"


def test_parent_drops_last_level_when_nested():
    assert Namespace(("a", "b", "c")).parent == Namespace(("a", "b"))
    assert Namespace(("a", "b")).parent == Namespace(("a",))


def test_parent_is_none_when_top_level():
    assert Namespace(("a",)).parent is None


def test_validate_name_accepts_when_name_is_ordinary():
    validate_name("orders", "table")
    validate_name("with space.and.dots", "namespace")


@pytest.mark.parametrize("name", ["", "a\x1fb", "\x1f"])
def test_validate_name_raises_when_empty_or_contains_separator(name):
    with pytest.raises(ValueError, match="Invalid table name"):
        validate_name(name, "table")
