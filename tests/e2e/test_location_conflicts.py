"""What Spark sees when a LOCATION is another table's: a message that says so, spelled as Spark spells paths."""

from __future__ import annotations

import pytest

from catalog_es.locations import local_path
from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import assert_error, create_namespace, create_table, load_table
from tests.e2e.shared_server import module_catalog, warehouse, warehouse_rest  # noqa: F401 - fixtures
from tests.e2e.test_views import create_view

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("staged", [False, True], ids=["create", "stage-create"])
@pytest.mark.parametrize("suffix", ["", "/nested"], ids=["equal", "nested"])
def test_create_table_says_location_overlaps_another_table_when_equal_or_nested(
    rest: RestApi, suffix: str, staged: bool
) -> None:
    create_namespace(rest, "shop")
    first = create_table(rest, "shop", "first")
    assert first.status_code == 200, first.text
    spark_spelling = "file:" + local_path(first.json()["metadata"]["location"]) + suffix  # HadoopFileIO: file:/abs

    response = create_table(rest, "shop", "second", {"location": spark_spelling, "stage-create": staged})

    message = assert_error(response, 400, "BadRequestException")
    assert "overlaps the location of another table" in message
    assert "Location is already taken by another table or view" in message  # what Lakekeeper's Spark tests assert


def test_a_location_with_a_question_mark_is_refused_not_cut_when_a_table_namespace_or_move_names_it(
    rest: RestApi,
) -> None:
    create_namespace(rest, "shop")
    created = create_table(rest, "shop", "t")
    assert created.status_code == 200, created.text
    location = created.json()["metadata"]["location"]

    refused_create = create_table(rest, "shop", "q", {"location": f"{location}_q?"})
    assert "'?'" in assert_error(refused_create, 400, "BadRequestException")
    namespace = rest.http.post(
        rest.url("namespaces"), json={"namespace": ["q"], "properties": {"location": f"{location}_ns?"}}
    )
    assert "'?'" in assert_error(namespace, 400, "BadRequestException")
    move = {"requirements": [], "updates": [{"action": "set-location", "location": f"{location}_moved?"}]}
    refused_move = rest.http.post(rest.url("namespaces/shop/tables/t"), json=move)
    assert "'?'" in assert_error(refused_move, 400, "BadRequestException")
    assert create_table(rest, "shop", "q").status_code == 200  # nothing was claimed by the refused create


def test_locations_come_back_as_the_client_wrote_them_when_spelled_file_colon_single_slash(rest: RestApi) -> None:
    """Iceberg's kit compares the location it sent (`file:/x`, Java's spelling) with the one it gets back."""
    create_namespace(rest, "shop")
    probe = create_table(rest, "shop", "probe")
    assert probe.status_code == 200, probe.text
    root = "file:" + local_path(probe.json()["metadata"]["location"]).rsplit("/", 1)[0]  # the namespace's directory

    table = create_table(rest, "shop", "t", {"location": f"{root}/t_here/"})
    view = create_view(rest, "shop", "v", {"location": f"{root}/v_here"})
    namespace = rest.http.post(
        rest.url("namespaces"), json={"namespace": ["n"], "properties": {"location": f"{root}/n"}}
    )

    assert table.status_code == 200, table.text
    assert table.json()["metadata"]["location"] == f"{root}/t_here"  # only the trailing slash goes
    assert table.json()["metadata-location"].startswith(f"{root}/t_here/metadata/")
    assert load_table(rest, "shop", "t")["metadata"]["location"] == f"{root}/t_here"
    assert view.status_code == 200, view.text
    assert view.json()["metadata"]["location"] == f"{root}/v_here"
    assert view.json()["metadata-location"].startswith(f"{root}/v_here/metadata/")
    assert namespace.status_code == 200, namespace.text
    assert rest.http.get(rest.url("namespaces/n")).json()["properties"]["location"] == f"{root}/n"
    # Compared canonically all the same: the other spelling of the same place is taken.
    again = create_table(rest, "shop", "t2", {"location": f"file://{local_path(root)}/t_here"})
    assert "overlaps the location of another table" in assert_error(again, 400, "BadRequestException")
