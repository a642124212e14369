"""Polars reads and appends to catalog-es tables through pyiceberg's REST client."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.e2e.engines.conftest import ALL_ROWS, FIRST_ROWS, SCHEMA, Seeded, rows

pl = pytest.importorskip("polars")


@pytest.fixture(autouse=True)
def _plan_with_pyiceberg(monkeypatch: pytest.MonkeyPatch) -> None:
    """Polars plans Iceberg scans with pyiceberg unless the optional `polars_iceberg` plugin is installed."""
    monkeypatch.setenv("POLARS_ICEBERG_PLANNER", "pyiceberg")


def test_polars_scans_the_current_snapshot_and_an_older_one(seeded: Seeded) -> None:
    table = seeded.catalog.load_table("engines.sales")
    assert rows(pl.scan_iceberg(table).collect().to_arrow()) == ALL_ROWS
    old = pl.scan_iceberg(table, snapshot_id=seeded.first_snapshot_id).collect()
    assert rows(old.to_arrow()) == FIRST_ROWS
    oslo = pl.scan_iceberg(table).filter(pl.col("city") == "Oslo").select(pl.col("amount").sum()).collect()
    assert oslo.item() == 40.0


def test_polars_appends_and_the_catalog_serves_the_new_snapshot(seeded: Seeded) -> None:
    frame = pl.DataFrame(
        {"id": [5], "city": ["Kyiv"], "amount": [1.5]}, schema={"id": pl.Int64, "city": pl.String, "amount": pl.Float64}
    )
    frame.write_iceberg(seeded.catalog.load_table("engines.sales"), mode="append")

    reloaded = seeded.catalog.load_table("engines.sales")
    assert len(reloaded.snapshots()) == 3
    expected = sorted([*ALL_ROWS, (5, "Kyiv", 1.5)])
    assert rows(reloaded.scan().to_arrow()) == expected
    assert rows(pl.scan_iceberg(reloaded).collect().to_arrow()) == expected
    assert pa.schema(reloaded.schema().as_arrow()) == SCHEMA.as_arrow()
