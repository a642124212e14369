"""View commits (replaceView) without PostgreSQL: given a view created by the create command on `file` storage."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakes import SCHEMA, VERSION, FakeCatalogState, created_row, fake_context, file_warehouse, namespace_row

from catalog_es.errors import CommitFailedError, NoSuchViewError
from catalog_es.events import ViewCommitted, ViewCreated
from catalog_es.identifiers import Namespace
from catalog_es.metadata.table_changes import metadata_digest
from catalog_es.store.eventstore import EventMetadata
from commands.commit_view import CommitView, handle_commit_view
from commands.create_view import CreateView, handle_create_view

META = EventMetadata(actor="tester")
DB = Namespace(("db",))
REPLACE = [
    {
        "action": "add-view-version",
        "view-version": {**VERSION, "representations": [{"type": "sql", "sql": "SELECT 2", "dialect": "spark"}]},
    },
    {"action": "set-current-view-version", "view-version-id": -1},
]


@pytest.fixture
def given(tmp_path):
    warehouse = file_warehouse(tmp_path)
    db = namespace_row("db", number=10, warehouse=warehouse)
    catalog = FakeCatalogState([db], warehouses=[warehouse])
    ctx, store = fake_context(catalog)
    asyncio.run(handle_create_view(CreateView(warehouse.id, DB, "v", SCHEMA, VERSION, META), ctx))
    [created] = store.appended
    assert isinstance(created, ViewCreated)
    catalog.tabulars.append(created_row(created, db))
    store.appended.clear()
    return ctx, store, catalog.tabulars[0]


def _files(row) -> list[str]:
    return sorted(path.name for path in Path(row.metadata_location.removeprefix("file://")).parent.iterdir())


def test_replacing_a_view_writes_its_next_metadata_and_records_the_change(given):
    ctx, store, row = given
    requirements = [{"type": "assert-view-uuid", "uuid": str(row.id)}]
    result = asyncio.run(handle_commit_view(CommitView(row.warehouse_id, DB, "v", requirements, REPLACE, META), ctx))
    [committed] = store.appended
    assert isinstance(committed, ViewCommitted)
    assert (committed.view_id, committed.updates, committed.previous_metadata_location) == (
        row.id,
        REPLACE,
        row.metadata_location,
    )
    assert committed.metadata_location == result.metadata_location
    assert committed.metadata_sha256 == metadata_digest(result.metadata)
    assert committed.metadata is None  # recorded whole only when the view moved
    current = result.metadata["current-version-id"]
    [version] = [v for v in result.metadata["versions"] if v["version-id"] == current]
    assert version["representations"][0]["sql"] == "SELECT 2"
    assert len(_files(row)) == 2


def test_a_replace_that_changes_nothing_records_nothing(given):
    ctx, store, row = given
    result = asyncio.run(handle_commit_view(CommitView(row.warehouse_id, DB, "v", [], [], META), ctx))
    assert result.metadata_location == row.metadata_location
    assert store.appended == []


def test_replace_refuses_a_missing_view_a_failed_requirement_and_a_lost_race(given):
    ctx, store, row = given
    with pytest.raises(NoSuchViewError):
        asyncio.run(handle_commit_view(CommitView(row.warehouse_id, DB, "nope", [], REPLACE, META), ctx))
    wrong = [{"type": "assert-view-uuid", "uuid": "00000000-0000-0000-0000-000000000bad"}]
    with pytest.raises(CommitFailedError):
        asyncio.run(handle_commit_view(CommitView(row.warehouse_id, DB, "v", wrong, REPLACE, META), ctx))
    store.versions[f"view-{row.id}"] = 2  # another replace landed since the read
    with pytest.raises(CommitFailedError, match="changed concurrently"):
        asyncio.run(handle_commit_view(CommitView(row.warehouse_id, DB, "v", [], REPLACE, META), ctx))
    assert store.appended == []
    assert _files(row) == [Path(row.metadata_location).name]  # the loser's file is deleted again
