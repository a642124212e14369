"""Daft reads and appends to catalog-es tables through pyiceberg's REST client."""

from __future__ import annotations

import pytest

from tests.e2e.engines.conftest import ALL_ROWS, FIRST_ROWS, Seeded, rows

daft = pytest.importorskip("daft")


def test_daft_reads_the_current_snapshot_and_an_older_one(seeded: Seeded) -> None:
    table = seeded.catalog.load_table("engines.sales")
    assert rows(daft.read_iceberg(table).to_arrow()) == ALL_ROWS
    assert rows(daft.read_iceberg(table, snapshot_id=seeded.first_snapshot_id).to_arrow()) == FIRST_ROWS
    oslo = daft.read_iceberg(table).where(daft.col("city") == "Oslo").select(daft.col("id")).to_pydict()
    assert sorted(oslo["id"]) == [1, 3]


def test_daft_appends_and_the_catalog_serves_the_new_snapshot(seeded: Seeded) -> None:
    frame = daft.from_pydict({"id": [6], "city": ["Accra"], "amount": [2.0]})
    frame.write_iceberg(seeded.catalog.load_table("engines.sales"), mode="append")

    reloaded = seeded.catalog.load_table("engines.sales")
    assert len(reloaded.snapshots()) == 3
    expected = sorted([*ALL_ROWS, (6, "Accra", 2.0)])
    assert rows(reloaded.scan().to_arrow()) == expected
    assert rows(daft.read_iceberg(reloaded).to_arrow()) == expected
