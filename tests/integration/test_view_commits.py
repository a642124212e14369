"""Concurrent view replaces: one wins by stream version, the loser leaves no event and no metadata file."""

from __future__ import annotations

import asyncio

import psycopg

from catalog_es.errors import CommitFailedError
from catalog_es.events import ViewCommitted
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.commit_view import CommitView, handle_commit_view
from commands.create_view import CreateView, handle_create_view
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.catalog.queries import CatalogReadModel

META = EventMetadata(actor="racer")
DB = Namespace(("db",))
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
VERSION = {
    "version-id": 1,
    "schema-id": 0,
    "timestamp-ms": 1_700_000_000_000,
    "summary": {},
    "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}],
    "default-namespace": ["db"],
}


class BothReadFirst(CatalogReadModel):
    """The real read model, except that the first two view lookups wait for each other."""

    def __init__(self) -> None:
        self._waiting = 2
        self._barrier = asyncio.Barrier(2)

    async def view(self, conn, warehouse_id, namespace, name):
        row = await super().view(conn, warehouse_id, namespace, name)
        if self._waiting > 0:
            self._waiting -= 1
            await asyncio.wait_for(self._barrier.wait(), timeout=20)
        return row


def test_only_one_replace_wins_and_loser_leaves_no_file_when_two_replace_the_same_version(
    open_catalog, migrated_dsn, warehouse_dir
):
    async def scenario():
        async with open_catalog() as setup:
            await handle_create_namespace(CreateNamespace(setup.warehouse_id, DB, {}, META), setup.ctx)
            created = await handle_create_view(
                CreateView(setup.warehouse_id, DB, "v", SCHEMA, VERSION, META), setup.ctx
            )
        async with open_catalog(state=BothReadFirst()) as catalog:

            def replace(sql: str):
                version = {**VERSION, "representations": [{"type": "sql", "sql": sql, "dialect": "spark"}]}
                return handle_commit_view(
                    CommitView(
                        catalog.warehouse_id,
                        DB,
                        "v",
                        [{"type": "assert-view-uuid", "uuid": created.metadata["view-uuid"]}],
                        [
                            {"action": "add-view-version", "view-version": version},
                            {"action": "set-current-view-version", "view-version-id": -1},
                        ],
                        META,
                    ),
                    catalog.ctx,
                )

            return created, await asyncio.gather(replace("SELECT 2"), replace("SELECT 3"), return_exceptions=True)

    created, outcomes = asyncio.run(scenario())
    winners = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    assert [type(outcome) for outcome in outcomes if isinstance(outcome, BaseException)] == [CommitFailedError]
    [winner] = winners

    files = {path.as_uri() for path in warehouse_dir.rglob("*.metadata.json")}
    assert files == {created.metadata_location, winner.metadata_location}
    with psycopg.connect(migrated_dsn) as conn:
        committed = conn.execute("SELECT count(*) FROM catalog_events WHERE type = %s", (ViewCommitted.type_name,))
        assert committed.fetchone() == (1,)
        [(metadata_location, version)] = conn.execute("SELECT metadata_location, version FROM views").fetchall()
    assert (metadata_location, version) == (winner.metadata_location, 2)
