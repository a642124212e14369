"""Location canonicalisation and the sub-location / overlap rules."""

from __future__ import annotations

import pytest

from catalog_es.errors import InvalidLocationError
from catalog_es.locations import (
    is_strictly_inside,
    local_path,
    location_key,
    normalize_location,
    overlaps,
    require_inside_warehouse,
)


@pytest.mark.parametrize("spelling", ["file:/x/y", "file:///x/y", "/x/y", "file://localhost/x/y", "  /x/y  "])
def test_normalize_location_gives_one_spelling_when_local_path_is_spelled_differently(spelling):
    assert normalize_location(spelling) == "file:///x/y"


@pytest.mark.parametrize("spelling", ["file:///x/y/", "file:/x/y//", "/x/y/"])
def test_normalize_location_drops_trailing_slashes_when_present(spelling):
    assert normalize_location(spelling) == "file:///x/y"


def test_normalize_location_drops_trailing_slash_when_object_store_uri():
    assert normalize_location("s3://bucket/warehouse/") == "s3://bucket/warehouse"


def test_normalize_location_keeps_root_when_location_is_filesystem_root():
    assert normalize_location("/") == "file:///"
    assert normalize_location("file:///") == "file:///"


def test_normalize_location_raises_when_location_has_no_scheme():
    with pytest.raises(InvalidLocationError):
        normalize_location("relative/path")


def test_normalize_location_raises_when_file_location_names_a_host():
    with pytest.raises(InvalidLocationError):
        normalize_location("file://otherhost/x")


def test_local_path_returns_filesystem_path_when_file_location():
    assert local_path("file:/data/wh/") == "/data/wh"


def test_local_path_raises_when_location_is_not_local():
    with pytest.raises(InvalidLocationError):
        local_path("s3://bucket/wh")


def test_is_strictly_inside_is_true_when_child_is_below_parent_in_any_spelling():
    assert is_strictly_inside("file:/wh/ns/t", "file:///wh")
    assert is_strictly_inside("/wh/ns/t/", "file:/wh/")
    assert is_strictly_inside("s3://b/wh/t", "s3://b/wh/")


def test_is_strictly_inside_is_false_when_only_a_name_prefix_is_shared():
    assert not is_strictly_inside("file:///wh/xa", "file:///wh/x")
    assert not is_strictly_inside("file:///wh/xa/t", "/wh/x")


def test_is_strictly_inside_is_false_when_locations_are_equal():
    assert not is_strictly_inside("file:///wh/x", "file:///wh/x")
    assert not is_strictly_inside("file:/wh/x/", "/wh/x")


def test_is_strictly_inside_is_false_when_child_is_the_parent_of_parent():
    assert not is_strictly_inside("/wh", "/wh/x")


def test_overlaps_is_true_when_equal_in_different_spellings():
    assert overlaps("file:/wh/x", "/wh/x/")


def test_overlaps_is_true_when_one_contains_the_other_in_either_order():
    assert overlaps("/wh/x", "/wh/x/y")
    assert overlaps("/wh/x/y", "/wh/x")


def test_overlaps_is_false_when_only_a_name_prefix_is_shared():
    assert not overlaps("/wh/x", "/wh/xa")
    assert not overlaps("/wh/xa", "/wh/x")


def test_overlaps_is_false_when_siblings():
    assert not overlaps("/wh/a/t", "/wh/b/t")


def test_overlaps_is_true_when_paths_differ_only_by_a_doubled_slash():
    # `/wh//t` and `/wh/t` name the same directory on every POSIX filesystem.
    assert overlaps("file:///wh//t", "file:///wh/t")


def test_require_inside_warehouse_returns_canonical_location_when_inside():
    assert require_inside_warehouse("file:/wh/ns/t/", "file:///wh") == "file:///wh/ns/t"


@pytest.mark.parametrize("location", ["file:///other/t", "file:///whx/t", "file:///wh", "/wh/", "s3://b/wh/t"])
def test_require_inside_warehouse_raises_when_not_strictly_inside(location):
    with pytest.raises(InvalidLocationError):
        require_inside_warehouse(location, "file:///wh")


@pytest.mark.parametrize("location", ["file:///wh/../etc/t", "/wh/ns/../../etc", "file:///wh/./../x"])
def test_require_inside_warehouse_raises_when_dot_dot_segments_escape_the_warehouse(location):
    # Storage resolves `..` (pyiceberg's FileIO writes to /etc/t for file:///wh/../etc/t).
    with pytest.raises(InvalidLocationError):
        require_inside_warehouse(location, "file:///wh")


@pytest.mark.parametrize("scheme", ["s3a", "s3n"])
def test_require_inside_warehouse_accepts_alternative_scheme_when_the_warehouse_allows_it(scheme):
    location = f"{scheme}://bucket/wh/ns/t/"
    assert require_inside_warehouse(location, "s3://bucket/wh", ("s3a", "s3n")) == f"{scheme}://bucket/wh/ns/t"


@pytest.mark.parametrize("scheme", ["s3a", "s3n"])
def test_require_inside_warehouse_refuses_alternative_scheme_when_not_allowed(scheme):
    with pytest.raises(InvalidLocationError, match="not a sub-location"):
        require_inside_warehouse(f"{scheme}://bucket/wh/ns/t", "s3://bucket/wh")


def test_require_inside_warehouse_refuses_alternative_scheme_outside_the_warehouse():
    with pytest.raises(InvalidLocationError):
        require_inside_warehouse("s3a://other/wh/ns/t", "s3://bucket/wh", ("s3a", "s3n"))
    with pytest.raises(InvalidLocationError):
        require_inside_warehouse("gs://bucket/wh/ns/t", "s3://bucket/wh", ("s3a", "s3n"))


def test_location_key_is_one_for_every_spelling_of_an_s3_location():
    assert location_key("s3a://bucket/wh/t/") == location_key("s3n://bucket/wh/t") == "s3://bucket/wh/t"
    assert location_key("file:/x/y") == "file:///x/y"
    assert overlaps("s3a://bucket/wh/t", "s3://bucket/wh/t/data")


@pytest.mark.parametrize("location", ["s3://b/wh/q?", "s3://b/wh/q?x=1", "s3://b/wh/q#frag", "file:///wh/a?b/c"])
def test_require_inside_warehouse_refuses_a_location_a_uri_parser_would_cut_when_it_holds_a_query_or_fragment(
    location: str,
) -> None:
    """Silently cut (`s3://b/wh/q?` stored as `s3://b/wh/q`) it named another place than the client's."""
    warehouse = "file:///wh" if location.startswith("file:") else "s3://b/wh"
    with pytest.raises(InvalidLocationError, match="%3F"):
        require_inside_warehouse(location, warehouse)


def test_require_inside_warehouse_keeps_a_percent_encoded_question_mark_when_given_one() -> None:
    assert require_inside_warehouse("s3://b/wh/q%3F", "s3://b/wh") == "s3://b/wh/q%3F"
