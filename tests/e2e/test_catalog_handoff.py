"""Hand-off between two catalog-es instances (issue 32): `export-catalog` from the first, release its tables and
views there (no file touched, no soft delete), `import --manifest` into the second, which then serves the same
tables and views; the first no longer lists them, and no file changed. Importing the manifest again changes
nothing."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, run_cli, start_catalog, stop_catalog

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))


@pytest.fixture
def two_catalogs(pg_admin_dsn: str, tmp_path: Path) -> Iterator[tuple[RunningCatalog, RunningCatalog]]:
    running = []
    with new_database(pg_admin_dsn, "handoff") as first, new_database(pg_admin_dsn, "handoff") as second:
        try:
            for dsn, data in zip((first, second), ("a", "b"), strict=True):
                env = {**os.environ, "CATALOG_ES__PG_DSN": dsn, "CATALOG_ES__NATS__ENABLED": "false"}
                running.append(start_catalog(tmp_path / data, env))
            yield running[0], running[1]
        finally:
            for catalog in running:
                stop_catalog(catalog)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {str(path): (path.stat().st_size, path.stat().st_mtime_ns) for path in root.rglob("*") if path.is_file()}


def _cli(catalog: RunningCatalog, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_cli(args, catalog.env)
    assert done.returncode == 0, done.stderr
    return done


def _events(catalog: RunningCatalog) -> list[tuple[str, dict[str, Any]]]:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        rows = conn.execute("SELECT type, extensions FROM catalog_events ORDER BY global_position").fetchall()
    return [(str(row[0]), dict(row[1])) for row in rows]


def _id(catalog: RunningCatalog, query: str) -> tuple[str, str]:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return str(row[0]), str(row[1])


def test_export_release_import_round_trip(two_catalogs: tuple[RunningCatalog, RunningCatalog], tmp_path: Path) -> None:
    first, second = two_catalogs
    a = load_catalog("a", type="rest", uri=first.catalog_uri, warehouse="demo")
    a.create_namespace("shop", {"owner": "ops"})
    table = a.create_table("shop.items", SCHEMA)
    table.append(pa.table({"id": pa.array([1, 2, 3], type=pa.int64())}))
    version = ViewVersion(
        version_id=1,
        schema_id=0,
        timestamp_ms=1_700_000_000_000,
        summary={"engine-name": "pyiceberg"},
        representations=[
            ViewRepresentation(SQLViewRepresentation(type="sql", sql="SELECT * FROM items", dialect="spark"))
        ],
        default_namespace=("shop",),
    )
    a.create_view("shop.v", SCHEMA, version)
    demo = first.data_dir / "warehouse" / "demo"
    files_before = _files(demo)

    # The second catalog's warehouse covers the first's files (a catalog of its own: no overlap between them).
    created = httpx.post(
        f"{second.base_url}/management/v1/warehouse",
        json={"warehouse-name": "lake", "storage-profile": {"type": "file", "location": str(demo)}},
    )
    assert created.status_code == 201, created.text

    manifest = tmp_path / "manifest.json"
    exported = _cli(first, "export-catalog", "--warehouse", "demo", "--output", str(manifest), "--source-name", "cat-a")
    assert "1 tables, 1 views" in exported.stdout

    table_id, warehouse_id = _id(first, "SELECT id, warehouse_id FROM tables WHERE name = 'items'")
    view_id, _ = _id(first, "SELECT id, warehouse_id FROM views WHERE name = 'v'")
    management = f"{first.base_url}/management/v1/warehouse/{warehouse_id}"
    # A soft-delete profile would hide a dropped table and schedule its expiration: a release does neither.
    soft = httpx.post(
        f"{management}/delete-profile", json={"delete-profile": {"type": "soft", "expiration-seconds": 3600}}
    )
    assert soft.status_code in (200, 204), soft.text
    body = {"released-to": f"{second.catalog_uri}#lake"}
    assert httpx.post(f"{management}/table/{table_id}/release", json=body).status_code == 204
    assert httpx.post(f"{management}/view/{view_id}/release", json=body).status_code == 204
    assert httpx.post(f"{management}/table/{table_id}/release", json=body).status_code == 404
    assert a.list_tables("shop") == []
    assert a.list_views("shop") == []
    released = [(kind, ext.get("releasedto")) for kind, ext in _events(first) if "releasedto" in ext]
    assert released == [
        ("io.catalog-es.table.dropped.v1", body["released-to"]),
        ("io.catalog-es.view.dropped.v1", body["released-to"]),
    ]
    with psycopg.connect(first.env["CATALOG_ES__PG_DSN"]) as conn:  # no purge or expiry was scheduled
        assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (0,)

    done = _cli(second, "import", "--manifest", str(manifest), "--warehouse", "lake")
    print(done.stderr)
    b = load_catalog("b", type="rest", uri=second.catalog_uri, warehouse="lake")
    assert b.load_namespace_properties("shop")["owner"] == "ops"
    moved = b.load_table("shop.items")
    assert moved.metadata_location == table.metadata_location
    assert moved.scan().to_arrow().num_rows == 3
    assert str(b.load_view("shop.v").metadata.view_uuid) == view_id
    assert _files(demo) == files_before  # nothing written, moved or deleted through the whole hand-off
    imported = {ext["importedfrom"] for _, ext in _events(second) if "importedfrom" in ext}
    assert {"manifest:cat-a#shop.items", "manifest:cat-a#shop.v"} <= imported

    events = len(_events(second))
    _cli(second, "import", "--manifest", str(manifest), "--warehouse", "lake")
    assert len(_events(second)) == events  # the same manifest again changes nothing


def test_import_from_another_catalog_es_over_rest_takes_views_too(
    two_catalogs: tuple[RunningCatalog, RunningCatalog],
) -> None:
    """A REST source lists views (SQL and Glue cannot): the view arrives at its metadata file."""
    first, second = two_catalogs
    a = load_catalog("a", type="rest", uri=first.catalog_uri, warehouse="demo")
    a.create_namespace("shop")
    a.create_namespace(("shop", "eu"))  # nested, below a parent the walk must find first
    a.create_table("shop.eu.items", SCHEMA).append(pa.table({"id": pa.array([5], type=pa.int64())}))
    version = ViewVersion(
        version_id=1,
        schema_id=0,
        timestamp_ms=1_700_000_000_000,
        summary={"engine-name": "pyiceberg"},
        representations=[ViewRepresentation(SQLViewRepresentation(type="sql", sql="SELECT 1", dialect="spark"))],
        default_namespace=("shop", "eu"),
    )
    a.create_view("shop.eu.v", SCHEMA, version)
    demo = first.data_dir / "warehouse" / "demo"
    created = httpx.post(
        f"{second.base_url}/management/v1/warehouse",
        json={"warehouse-name": "lake", "storage-profile": {"type": "file", "location": str(demo)}},
    )
    assert created.status_code == 201, created.text
    source = ["--source", "type=rest", "--source", f"uri={first.catalog_uri}", "--source", "warehouse=demo"]
    _cli(second, "import", *source, "--warehouse", "lake")
    b = load_catalog("b", type="rest", uri=second.catalog_uri, warehouse="lake")
    assert b.load_view(("shop", "eu", "v")).metadata == a.load_view(("shop", "eu", "v")).metadata
    assert b.load_table(("shop", "eu", "items")).scan().to_arrow().num_rows == 1
    events = len(_events(second))
    _cli(second, "import", *source, "--warehouse", "lake")
    assert len(_events(second)) == events
