"""A handler that fails inside its transaction leaves no events, no read-model rows and no metadata file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest

from catalog_es.errors import AlreadyExistsError, CommitFailedError, InvalidLocationError
from catalog_es.events import TableCommitted, TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.locations import local_path
from catalog_es.store.eventstore import EventMetadata
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.catalog.queries import CatalogReadModel

META = EventMetadata(actor="racer")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


class Rendezvous(CatalogReadModel):
    """The real read model, except that the first `parties` calls of one query wait for each other.

    Concurrent handlers thus both decide on the same state before either of them writes.
    """

    def __init__(self, query: str, parties: int = 2) -> None:
        self._query = query
        self._waiting = parties
        self._barrier = asyncio.Barrier(parties)

    async def _meet(self, query: str) -> None:
        if query == self._query and self._waiting > 0:
            self._waiting -= 1
            await asyncio.wait_for(self._barrier.wait(), timeout=20)

    async def table(self, conn, warehouse_id, namespace, name):
        row = await super().table(conn, warehouse_id, namespace, name)
        await self._meet("table")
        return row

    async def table_name_taken(self, conn, namespace_id, name):
        taken = await super().table_name_taken(conn, namespace_id, name)
        await self._meet("table_name_taken")
        return taken


def _metadata_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.metadata.json"))


def _rows(dsn: str, query: str) -> list[tuple]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(query).fetchall()


def test_only_one_commit_wins_and_loser_leaves_no_file_when_two_commit_against_the_same_base(
    open_catalog, migrated_dsn
):
    async def scenario():
        async with open_catalog() as setup:
            await handle_create_namespace(CreateNamespace(setup.warehouse_id, DB, {}, META), setup.ctx)
            # Opted out of server-side rebase, which would retry the loser on the new head (its requirement holds).
            no_rebase = {"catalog-es.server-side-rebase": "false"}
            create = CreateTable(setup.warehouse_id, DB, "t", SCHEMA, META, properties=no_rebase)
            created = await handle_create_table(create, setup.ctx)
        async with open_catalog(state=Rendezvous("table")) as catalog:

            def commit(value: str):
                return handle_commit_table(
                    CommitTable(
                        catalog.warehouse_id,
                        DB,
                        "t",
                        [{"type": "assert-table-uuid", "uuid": created.metadata["table-uuid"]}],
                        [{"action": "set-properties", "updates": {"writer": value}}],
                        META,
                    ),
                    catalog.ctx,
                )

            outcomes = await asyncio.gather(commit("a"), commit("b"), return_exceptions=True)
            return created, outcomes

    created, outcomes = asyncio.run(scenario())
    winners = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    losers = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert len(winners) == 1, outcomes
    assert len(losers) == 1
    assert isinstance(losers[0], CommitFailedError)
    [winner] = winners

    table_dir = Path(local_path(created.metadata["location"]))
    files = _metadata_files(table_dir / "metadata")
    assert [path.name[:5] for path in files] == ["00000", "00001"]
    assert files[1].as_uri() == winner.metadata_location
    committed = _rows(migrated_dsn, f"SELECT data FROM catalog_events WHERE type = '{TableCommitted.type_name}'")
    assert [row[0]["metadata_location"] for row in committed] == [winner.metadata_location]
    [(metadata_location, version, writer)] = _rows(
        migrated_dsn, "SELECT metadata_location, version, metadata->'properties'->>'writer' FROM tables"
    )
    assert (metadata_location, version) == (winner.metadata_location, 2)
    assert writer == winner.metadata["properties"]["writer"]


def test_loser_leaves_no_table_no_event_and_no_file_when_two_create_the_same_name(
    open_catalog, migrated_dsn, warehouse_dir
):
    async def scenario():
        async with open_catalog() as setup:
            await handle_create_namespace(CreateNamespace(setup.warehouse_id, DB, {}, META), setup.ctx)
        async with open_catalog(state=Rendezvous("table_name_taken")) as catalog:

            def create(name: str):
                return handle_create_table(CreateTable(catalog.warehouse_id, DB, name, SCHEMA, META), catalog.ctx)

            return await asyncio.gather(create("orders"), create("ORDERS"), return_exceptions=True)

    outcomes = asyncio.run(scenario())
    winners = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    losers = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert len(winners) == 1, outcomes
    assert [type(loser) for loser in losers] == [AlreadyExistsError]

    assert [path.as_uri() for path in _metadata_files(warehouse_dir)] == [winners[0].metadata_location]
    created = _rows(migrated_dsn, f"SELECT data->>'name' FROM catalog_events WHERE type = '{TableCreated.type_name}'")
    assert len(created) == 1
    tables = _rows(migrated_dsn, "SELECT name, metadata_location FROM tables")
    assert tables == [(created[0][0], winners[0].metadata_location)]


def test_commit_leaves_no_event_and_no_file_when_new_location_overlaps_another_table(
    open_catalog, migrated_dsn, warehouse_dir
):
    async def scenario():
        async with open_catalog() as catalog:
            await handle_create_namespace(CreateNamespace(catalog.warehouse_id, DB, {}, META), catalog.ctx)
            a = await handle_create_table(CreateTable(catalog.warehouse_id, DB, "a", SCHEMA, META), catalog.ctx)
            b = await handle_create_table(CreateTable(catalog.warehouse_id, DB, "b", SCHEMA, META), catalog.ctx)
            head = await catalog.store.head()
            with pytest.raises(InvalidLocationError):
                await handle_commit_table(
                    CommitTable(
                        catalog.warehouse_id,
                        DB,
                        "b",
                        [],
                        [{"action": "set-location", "location": f"{a.metadata['location']}/inside"}],
                        META,
                    ),
                    catalog.ctx,
                )
            return a, b, head, await catalog.store.head()

    a, b, head, after = asyncio.run(scenario())
    assert after == head
    assert {path.as_uri() for path in _metadata_files(warehouse_dir)} == {a.metadata_location, b.metadata_location}
    assert _rows(migrated_dsn, "SELECT version, metadata_location FROM tables WHERE name = 'b'") == [
        (1, b.metadata_location)
    ]
