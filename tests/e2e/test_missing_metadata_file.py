"""A table whose current metadata file was deleted behind the catalog's back: loadTable and commit answer 404
NotFoundException (as Iceberg Java's catalogs and its 1.11 kit expect) and serve it once it is back; a past catalog
(as-of prefix) is the log's record and serves it throughout (retention deletes old metadata files by design)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from catalog_es.locations import local_path
from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import assert_error, create_namespace, create_table, table_url

pytestmark = pytest.mark.e2e


def test_a_table_whose_metadata_file_is_gone_answers_404_when_loaded_or_committed_and_is_served_as_of(
    rest: RestApi,
) -> None:
    create_namespace(rest, "shop")
    created = create_table(rest, "shop", "t")
    assert created.status_code == 200, created.text
    metadata_location = created.json()["metadata-location"]
    time.sleep(0.01)
    config = rest.http.get("config", params={"warehouse": f"demo@{datetime.now(UTC).isoformat()}"})
    assert config.status_code == 200, config.text
    past = f"{config.json()['defaults']['prefix']}/namespaces/shop/tables/t"
    assert rest.http.get(past).status_code == 200
    stored = Path(local_path(metadata_location))
    hidden = stored.with_name(f"{stored.name}.bak")
    stored.rename(hidden)
    try:
        expected = f"Failed to open input stream for file: {metadata_location}"
        assert assert_error(rest.http.get(table_url(rest, "shop", "t")), 404, "NotFoundException") == expected
        commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "b"}}]}
        assert assert_error(rest.http.post(table_url(rest, "shop", "t"), json=commit), 404, "NotFoundException") == (
            expected
        )
        assert rest.http.get(past).status_code == 200
    finally:
        hidden.rename(stored)
    assert rest.http.get(table_url(rest, "shop", "t")).status_code == 200
    assert rest.http.get(past).status_code == 200
