"""pyiceberg 0.12 against a running catalog-es: namespaces, tables, data round trips, lifecycle."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import (
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestampType

from tests.e2e.conftest import RunningCatalog, eventually
from tests.e2e.shared_server import module_catalog, module_server, warehouse  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
    NestedField(4, "amount", LongType(), required=False),
)
SPEC = PartitionSpec(
    PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="category"),
    PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
)
ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("category", pa.string()),
        pa.field("ts", pa.timestamp("us")),
        pa.field("amount", pa.int64()),
    ]
)


def rows() -> pa.Table:
    return pa.Table.from_pylist(
        [
            {"id": 1, "category": "books", "ts": datetime(2024, 1, 1, 8, 30), "amount": 10},
            {"id": 2, "category": "books", "ts": datetime(2024, 1, 2, 9, 0), "amount": 20},
            {"id": 3, "category": "games", "ts": datetime(2024, 1, 1, 23, 59), "amount": 30},
            {"id": 4, "category": "games", "ts": datetime(2024, 3, 15, 12, 0), "amount": 40},
            {"id": 5, "category": "music", "ts": datetime(2023, 12, 31, 0, 0), "amount": 50},
        ],
        schema=ARROW_SCHEMA,
    )


def read_sorted(table: Table) -> list[dict[str, object]]:
    return sorted(table.scan().to_arrow().to_pylist(), key=lambda row: row["id"])


def local_dir(location: str) -> Path:
    """The filesystem directory of a `file:` table location (any spelling)."""
    parts = urlsplit(location)
    assert parts.scheme == "file", location
    return Path(unquote(parts.path))


@pytest.fixture
def ice(catalog: RunningCatalog, warehouse: str) -> Catalog:  # noqa: F811
    return load_catalog("x", type="rest", uri=catalog.catalog_uri, warehouse=warehouse)


@pytest.fixture
def sales(ice: Catalog) -> Table:
    """An empty partitioned table `shop.sales`."""
    ice.create_namespace("shop")
    return ice.create_table("shop.sales", schema=SCHEMA, partition_spec=SPEC)


# --- namespaces -------------------------------------------------------------------------------


def test_nested_namespaces_are_listed_per_level_when_created_with_properties(ice: Catalog) -> None:
    ice.create_namespace("a", {"owner": "alice"})
    ice.create_namespace(("a", "b"), {"owner": "bob", "tier": "gold"})
    ice.create_namespace("z")

    assert sorted(ice.list_namespaces()) == [("a",), ("z",)]
    assert ice.list_namespaces("a") == [("a", "b")]
    assert ice.list_namespaces(("a", "b")) == []

    props = ice.load_namespace_properties(("a", "b"))
    assert props["owner"] == "bob"
    assert props["tier"] == "gold"
    assert props["location"].startswith("file:")
    assert ice.load_namespace_properties("a")["owner"] == "alice"


def test_namespace_listing_follows_pages_when_page_size_is_small(
    catalog: RunningCatalog,
    warehouse: str,  # noqa: F811
) -> None:
    paged = load_catalog("x", type="rest", uri=catalog.catalog_uri, warehouse=warehouse, **{"rest-page-size": "2"})
    names = [f"ns{i}" for i in range(5)]
    for name in names:
        paged.create_namespace(name)

    assert sorted(paged.list_namespaces()) == [(name,) for name in names]


def test_update_namespace_properties_reports_updated_removed_missing_when_mixed(ice: Catalog) -> None:
    ice.create_namespace("a", {"keep": "1", "drop": "2", "change": "3"})

    summary = ice.update_namespace_properties("a", removals={"drop", "absent"}, updates={"change": "4", "new": "5"})

    assert sorted(summary.updated) == ["change", "new"]
    assert summary.removed == ["drop"]
    assert summary.missing == ["absent"]
    props = ice.load_namespace_properties("a")
    assert {k: v for k, v in props.items() if k != "location"} == {"keep": "1", "change": "4", "new": "5"}
    assert "location" in props


def test_namespace_exists_reflects_create_and_drop_when_namespace_is_empty(ice: Catalog) -> None:
    assert not ice.namespace_exists("a")
    ice.create_namespace("a")
    ice.create_namespace(("a", "b"))
    assert ice.namespace_exists("a")
    assert ice.namespace_exists(("a", "b"))

    ice.drop_namespace(("a", "b"))
    ice.drop_namespace("a")

    assert not ice.namespace_exists(("a", "b"))
    assert not ice.namespace_exists("a")
    assert ice.list_namespaces() == []


def test_drop_namespace_fails_when_it_holds_a_child_namespace_or_a_table(ice: Catalog) -> None:
    ice.create_namespace("a")
    ice.create_namespace(("a", "b"))
    with pytest.raises(NamespaceNotEmptyError):
        ice.drop_namespace("a")

    ice.create_table(("a", "b", "t"), schema=SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        ice.drop_namespace(("a", "b"))

    assert ice.namespace_exists(("a", "b"))
    assert ice.list_tables(("a", "b")) == [("a", "b", "t")]


def test_namespace_operations_raise_no_such_namespace_when_unknown(ice: Catalog) -> None:
    with pytest.raises(NoSuchNamespaceError):
        ice.load_namespace_properties("missing")
    with pytest.raises(NoSuchNamespaceError):
        ice.drop_namespace("missing")
    with pytest.raises(NoSuchNamespaceError):
        ice.update_namespace_properties("missing", updates={"k": "v"})
    with pytest.raises(NoSuchNamespaceError):
        ice.list_tables("missing")


def test_create_namespace_raises_already_exists_when_name_differs_only_in_case(ice: Catalog) -> None:
    ice.create_namespace("Sales", {"owner": "first"})
    with pytest.raises(NamespaceAlreadyExistsError):
        ice.create_namespace("Sales")
    with pytest.raises(NamespaceAlreadyExistsError):
        ice.create_namespace("sales", {"owner": "second"})

    assert ice.list_namespaces() == [("Sales",)]
    assert ice.load_namespace_properties("SALES")["owner"] == "first"


# --- tables -----------------------------------------------------------------------------------


def test_appended_rows_read_back_identically_when_table_is_partitioned(ice: Catalog, sales: Table) -> None:
    data = rows()
    sales.append(data)

    loaded = ice.load_table("shop.sales")
    assert loaded.spec() == SPEC
    assert [f.transform for f in loaded.spec().fields] == [IdentityTransform(), DayTransform()]
    assert loaded.current_snapshot() is not None
    result = loaded.scan().to_arrow()
    assert result.column_names == ARROW_SCHEMA.names
    assert read_sorted(loaded) == data.to_pylist()
    assert loaded.scan(row_filter="category == 'games'").to_arrow().num_rows == 2
    data_files = [task.file.file_path for task in loaded.scan().plan_files()]
    # one file per (category, day) partition, all below the table location
    assert len(data_files) == len({(r["category"], r["ts"].date()) for r in data.to_pylist()})
    assert all(local_dir(path).is_relative_to(local_dir(loaded.location())) for path in data_files)


def test_schema_spec_and_properties_persist_when_table_is_reloaded(ice: Catalog, sales: Table) -> None:
    sales.append(rows())
    with sales.update_schema() as update:
        update.add_column("note", StringType())
    with sales.update_spec() as update:
        update.add_identity("id")
    sales.transaction().set_properties(owner="alice", stage="raw").commit_transaction()
    sales.transaction().remove_properties("stage").commit_transaction()

    reloaded = ice.load_table("shop.sales")
    assert reloaded.schema().find_field("note").field_type == StringType()
    assert reloaded.schema().schema_id == sales.schema().schema_id
    assert len(reloaded.schemas()) == 2
    assert [f.name for f in reloaded.spec().fields] == ["category", "ts_day", "id"]
    assert len(reloaded.specs()) == 2
    assert reloaded.properties["owner"] == "alice"
    assert "stage" not in reloaded.properties
    assert reloaded.metadata_location == sales.metadata_location
    # old rows are still readable, with the new column empty
    assert [row["note"] for row in read_sorted(reloaded)] == [None] * rows().num_rows


def test_rename_moves_table_across_namespaces_when_destination_exists(ice: Catalog, sales: Table) -> None:
    sales.append(rows())
    ice.create_namespace("archive")

    renamed = ice.rename_table("shop.sales", "archive.sales_2024")

    assert not ice.table_exists("shop.sales")
    with pytest.raises(NoSuchTableError):
        ice.load_table("shop.sales")
    loaded = ice.load_table("archive.sales_2024")
    assert loaded.metadata.table_uuid == sales.metadata.table_uuid
    assert renamed.metadata.table_uuid == sales.metadata.table_uuid
    assert read_sorted(loaded) == rows().to_pylist()
    assert ice.list_tables("shop") == []
    assert ice.list_tables("archive") == [("archive", "sales_2024")]


def test_rename_raises_already_exists_when_destination_name_is_taken(ice: Catalog, sales: Table) -> None:
    other = ice.create_table("shop.other", schema=SCHEMA)

    with pytest.raises(TableAlreadyExistsError):
        ice.rename_table("shop.sales", "shop.OTHER")

    assert ice.load_table("shop.sales").metadata.table_uuid == sales.metadata.table_uuid
    assert ice.load_table("shop.other").metadata.table_uuid == other.metadata.table_uuid


def test_table_names_are_case_insensitive_but_case_preserving_when_created_mixed_case(ice: Catalog) -> None:
    ice.create_namespace("shop")
    created = ice.create_table("shop.Foo", schema=SCHEMA)

    assert ice.load_table("shop.foo").metadata.table_uuid == created.metadata.table_uuid
    assert ice.table_exists("shop.FOO")
    with pytest.raises(TableAlreadyExistsError):
        ice.create_table("shop.FOO", schema=SCHEMA)
    assert ice.list_tables("shop") == [("shop", "Foo")]
    assert ice.list_tables("SHOP") == [("shop", "Foo")]


def test_register_table_restores_data_when_table_was_dropped_without_purge(ice: Catalog, sales: Table) -> None:
    sales.append(rows())
    metadata_location = sales.metadata_location
    ice.drop_table("shop.sales")
    assert not ice.table_exists("shop.sales")

    registered = ice.register_table("shop.sales", metadata_location)

    assert registered.metadata_location == metadata_location
    loaded = ice.load_table("shop.sales")
    assert loaded.metadata.table_uuid == sales.metadata.table_uuid
    assert read_sorted(loaded) == rows().to_pylist()
    # and it accepts new commits
    loaded.append(rows())
    assert len(ice.load_table("shop.sales").scan().to_arrow()) == 2 * rows().num_rows


def test_register_table_raises_already_exists_when_name_is_taken(ice: Catalog, sales: Table) -> None:
    with pytest.raises(TableAlreadyExistsError):
        ice.register_table("shop.sales", sales.metadata_location)


def test_drop_table_keeps_files_when_purge_is_not_requested(ice: Catalog, sales: Table) -> None:
    sales.append(rows())
    table_dir = local_dir(sales.location())
    files_before = sorted(p for p in table_dir.rglob("*") if p.is_file())
    assert local_dir(sales.metadata_location) in files_before
    assert any(p.suffix == ".parquet" for p in files_before)

    ice.drop_table("shop.sales")

    assert not ice.table_exists("shop.sales")
    assert sorted(p for p in table_dir.rglob("*") if p.is_file()) == files_before


def test_purge_table_deletes_table_directory_when_purge_is_requested(ice: Catalog, sales: Table) -> None:
    sales.append(rows())
    table_dir = local_dir(sales.location())
    assert any(table_dir.rglob("*.parquet"))

    ice.purge_table("shop.sales")

    assert not ice.table_exists("shop.sales")
    assert eventually(lambda: not table_dir.exists())  # the task worker purges shortly after the drop


def test_table_operations_raise_no_such_table_when_table_is_unknown(ice: Catalog) -> None:
    ice.create_namespace("shop")
    with pytest.raises(NoSuchTableError):
        ice.load_table("shop.missing")
    with pytest.raises(NoSuchTableError):
        ice.drop_table("shop.missing")
    with pytest.raises(NoSuchTableError):
        ice.purge_table("shop.missing")
    with pytest.raises(NoSuchTableError):
        ice.rename_table("shop.missing", "shop.other")
    assert not ice.table_exists("shop.missing")


def test_create_table_raises_no_such_namespace_when_namespace_is_unknown(ice: Catalog) -> None:
    with pytest.raises(NoSuchNamespaceError):
        ice.create_table("missing.t", schema=SCHEMA)
    assert not ice.namespace_exists("missing")


def test_list_tables_shows_only_the_namespace_tables_when_several_namespaces_exist(ice: Catalog) -> None:
    ice.create_namespace("shop")
    ice.create_namespace("other")
    for name in ["c", "a", "b"]:
        ice.create_table(("shop", name), schema=SCHEMA)
    ice.create_table("other.x", schema=SCHEMA)

    assert sorted(ice.list_tables("shop")) == [("shop", "a"), ("shop", "b"), ("shop", "c")]
    assert ice.list_tables("other") == [("other", "x")]
    ice.drop_table("shop.b")
    assert sorted(ice.list_tables("shop")) == [("shop", "a"), ("shop", "c")]


def test_create_table_transaction_commits_table_with_data_when_transaction_closes(ice: Catalog) -> None:
    ice.create_namespace("shop")
    data = rows()

    with ice.create_table_transaction("shop.staged", schema=SCHEMA, partition_spec=SPEC) as txn:
        txn.set_properties(origin="ctas")
        txn.append(data)
        # nothing is visible before the assert-create commit
        assert not ice.table_exists("shop.staged")

    loaded = ice.load_table("shop.staged")
    assert loaded.properties["origin"] == "ctas"
    assert loaded.spec() == SPEC
    assert loaded.current_snapshot() is not None
    assert read_sorted(loaded) == data.to_pylist()
    assert ice.list_tables("shop") == [("shop", "staged")]
