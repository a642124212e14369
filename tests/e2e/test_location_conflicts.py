"""What Spark sees when a LOCATION is another table's: a message that says so, spelled as Spark spells paths."""

from __future__ import annotations

import pytest

from catalog_es.locations import local_path
from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import assert_error, create_namespace, create_table

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
