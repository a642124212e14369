"""`catalog-es import` (issue 32) from catalogs nobody here wrote: pyiceberg's SQL catalog (sqlite), AWS Glue
(moto's server) and lakana-server (PyPI, a REST catalog): refusal up front listing uncovered locations, dry run,
import, the same metadata and rows through catalog-es, events naming their source, a re-run that changes nothing,
and one that takes only what changed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tests.databases import new_database
from tests.e2e.conftest import RunningCatalog, run_cli
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False))


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, type=pa.int64()), "name": pa.array([f"n{i}" for i in ids])})


def _import(catalog: RunningCatalog, source: dict[str, str], *more: str) -> subprocess.CompletedProcess[str]:
    name = source["name"]
    source = {key: value for key, value in source.items() if key != "name"}
    pairs = [arg for key, value in source.items() for arg in ("--source", f"{key}={value}")]
    return run_cli(["import", *pairs, "--catalog-name", name, "--warehouse", "demo", *more], catalog.env)


def _events(catalog: RunningCatalog) -> list[tuple[str, dict[str, Any]]]:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        rows = conn.execute("SELECT type, extensions FROM catalog_events ORDER BY global_position").fetchall()
    return [(str(row[0]), dict(row[1])) for row in rows]


def _demo_location(catalog: RunningCatalog) -> Path:
    return catalog.data_dir / "warehouse" / "demo"


def _refunds(nested: bool) -> tuple[str, ...]:
    return ("sales", "eu", "refunds") if nested else ("sales", "refunds")


def _seed(source: Catalog, inside: Path, outside: Path, *, nested: bool) -> None:
    """A namespace inside the warehouse with properties (and a nested one where the source has them), tables
    with history; one namespace whose table lies outside the warehouse."""
    source.create_namespace("sales", {"owner": "finance", "comment": "imported"})
    if nested:
        source.create_namespace(("sales", "eu"))
    orders = source.create_table("sales.orders", SCHEMA, location=(inside / "sales" / "orders").as_uri())
    orders.append(_rows(1, 2))
    orders.append(_rows(3))
    refunds = source.create_table(_refunds(nested), SCHEMA, location=(inside / "sales" / "refunds").as_uri())
    refunds.append(_rows(7))
    source.create_namespace("legacy")
    source.create_table("legacy.old", SCHEMA, location=(outside / "old").as_uri()).append(_rows(9))


def _check_import(
    catalog: RunningCatalog, source: Catalog, source_props: dict[str, str], label: str, *, nested: bool
) -> None:
    outside_refusal = _import(catalog, source_props)
    assert outside_refusal.returncode == 1, outside_refusal.stderr
    listed = outside_refusal.stdout.split()
    old = source.load_table("legacy.old")
    assert sorted(listed) == sorted([old.metadata.location, old.metadata_location])
    assert not [event for event in _events(catalog) if "importedfrom" in event[1]]  # nothing was written

    before = len(_events(catalog))
    dry = _import(catalog, source_props, "--namespace", "sales", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "register-table\tsales.orders" in dry.stdout
    assert "create-namespace\tsales" in dry.stdout
    assert len(_events(catalog)) == before

    done = _import(catalog, source_props, "--namespace", "sales")
    assert done.returncode == 0, done.stderr
    print(done.stderr)
    imported = [event for event in _events(catalog)[before:] if "importedfrom" in event[1]]
    expected = {f"{label}#sales", f"{label}#sales.orders", f"{label}#{'.'.join(_refunds(nested))}"}
    if nested:
        expected.add(f"{label}#sales.eu")
    assert {extensions["importedfrom"] for _, extensions in imported} == expected

    target = load_catalog("target", type="rest", uri=catalog.catalog_uri, warehouse="demo")
    assert target.load_namespace_properties("sales")["owner"] == "finance"
    for name in (("sales", "orders"), _refunds(nested)):
        mine, theirs = target.load_table(name), source.load_table(name)
        assert mine.metadata_location == theirs.metadata_location
        assert mine.metadata.model_dump() == theirs.metadata.model_dump()  # history intact
        assert mine.scan().to_arrow().sort_by("id").equals(theirs.scan().to_arrow().sort_by("id"))
    assert len(target.load_table("sales.orders").metadata.snapshots) == 2

    after = len(_events(catalog))
    again = _import(catalog, source_props, "--namespace", "sales")
    assert again.returncode == 0, again.stderr
    assert len(_events(catalog)) == after  # a re-run changes nothing

    source.load_table("sales.orders").append(_rows(4))  # the source moves on: only that table is taken again
    changed = _import(catalog, source_props, "--namespace", "sales")
    assert changed.returncode == 0, changed.stderr
    new = _events(catalog)[after:]
    assert [(kind, extensions["importedfrom"]) for kind, extensions in new] == [
        ("io.catalog-es.table.registered.v1", f"{label}#sales.orders")
    ]
    assert target.load_table("sales.orders").scan().to_arrow().num_rows == 4


def test_import_from_pyiceberg_sql_catalog(catalog: RunningCatalog, tmp_path: Path) -> None:
    inside, outside = _demo_location(catalog) / "from-sql", tmp_path / "elsewhere"
    outside.mkdir()
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'source.db'}", "warehouse": inside.as_uri()}
    source = load_catalog("sql-source", **props)
    props["name"] = "sql-source"
    _seed(source, inside, outside, nested=True)
    _check_import(catalog, source, props, f"sql:sqlite:///{tmp_path / 'source.db'}", nested=True)


def test_import_from_glue_through_moto(catalog: RunningCatalog, tmp_path: Path, s3_endpoint: str) -> None:
    inside, outside = _demo_location(catalog) / "from-glue", tmp_path / "elsewhere"
    outside.mkdir()
    props = {
        "type": "glue",
        "glue.endpoint": s3_endpoint,  # moto's server answers every service on one port
        "glue.region": REGION,
        "glue.access-key-id": ACCESS_KEY_ID,
        "glue.secret-access-key": SECRET_ACCESS_KEY,
        "warehouse": inside.as_uri(),
    }
    source = load_catalog("glue-source", **props)
    props["name"] = "glue-source"
    _seed(source, inside, outside, nested=False)
    _check_import(catalog, source, props, "glue", nested=False)
    # The Glue database keeps what it said (no credential ever reaches an event).
    assert SECRET_ACCESS_KEY not in json.dumps([event[1] for event in _events(catalog)])


def test_import_from_lakana_server(catalog: RunningCatalog, pg_admin_dsn: str) -> None:
    """lakana-server 0.20.0 from PyPI (the benchmark's peer venv, `.bench/peers-venv`), a REST catalog nobody here
    wrote: its tables land in catalog-es with the same metadata and rows; a re-run changes nothing."""
    from tests.bench.bench_servers import LAKANA_KEY_ID, LAKANA_SECRET, start_lakana  # noqa: PLC0415

    work = _demo_location(catalog) / "lakana"
    work.mkdir(parents=True)
    # A database of its own (the catalog's is `catalog`'s).
    with new_database(pg_admin_dsn, "lakana") as dsn:
        try:
            server = start_lakana(dsn, work)
        except subprocess.CalledProcessError as exc:
            pytest.fail(f"lakana-server: {exc.stderr!r}")
        if server is None:
            pytest.skip("lakana-server could not be installed")
        try:
            base = server.base_url.removesuffix("/v1/bench")
            token = f"lakana_pat_{LAKANA_KEY_ID}_{LAKANA_SECRET}"
            props = {"type": "rest", "uri": base, "prefix": "bench", "token": token}
            source = load_catalog("lakana", **props)
            source.create_namespace_if_not_exists("bronze")  # lakana makes bronze, silver and gold itself
            table = source.create_table("bronze.events", SCHEMA)
            table.append(_rows(1, 2, 3))
            table.append(_rows(4))
            done = _import(catalog, {**props, "name": "lakana"}, "--namespace", "bronze")
            assert done.returncode == 0, done.stderr
            target = load_catalog("target", type="rest", uri=catalog.catalog_uri, warehouse="demo")
            mine, theirs = target.load_table("bronze.events"), source.load_table("bronze.events")
            assert mine.metadata_location == theirs.metadata_location
            assert mine.metadata.model_dump() == theirs.metadata.model_dump()
            assert mine.scan().to_arrow().sort_by("id").equals(theirs.scan().to_arrow().sort_by("id"))
            events = len(_events(catalog))
            assert _import(catalog, {**props, "name": "lakana"}, "--namespace", "bronze").returncode == 0
            assert len(_events(catalog)) == events
            assert token not in json.dumps([event[1] for event in _events(catalog)])
        finally:
            server.process.terminate()
            server.process.wait(timeout=30)
