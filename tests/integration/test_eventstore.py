"""The event store on PostgreSQL: gap-free commit-ordered positions, optimistic concurrency, append-only."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg import errors

from catalog_es.events import Event, NamespaceCreated, NamespacePropertiesUpdated, ProjectCreated, WarehouseCreated
from catalog_es.store.eventstore import NOTIFY_CHANNEL, EventMetadata, StreamVersionConflictError
from projections.registry import CATALOG

META = EventMetadata(actor="alice", request_id="req-42")


class BoomError(Exception):
    pass


async def _write(store, *appends: tuple[Event, int], fail: bool = False) -> None:
    """One transaction appending `(event, expected_version)` pairs; with `fail`, it raises before committing."""
    async with store.transaction(META) as tx:
        for event, expected_version in appends:
            await tx.append(event, expected_version=expected_version)
        if fail:
            raise BoomError


def _project() -> ProjectCreated:
    return ProjectCreated(project_id=uuid.uuid4(), name="p")


def _namespace_created(namespace_id: uuid.UUID) -> NamespaceCreated:
    return NamespaceCreated(
        namespace_id=namespace_id, warehouse_id=uuid.UUID(int=1), namespace=[f"ns-{namespace_id}"], properties={}
    )


def _count(dsn: str, table: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert row is not None
        return int(row[0])


def test_positions_are_gap_free_when_a_transaction_rolls_back_in_between(open_catalog, migrated_dsn):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            store = catalog.store
            async with store.transaction(META) as tx:
                await tx.append(_project(), expected_version=0)
                await tx.append(_project(), expected_version=0)
            with pytest.raises(BoomError):
                await _write(store, (_project(), 0), fail=True)
            async with store.transaction(META) as tx:
                await tx.append(_project(), expected_version=0)
            return await store.read(), await store.head()

    events, head = asyncio.run(scenario())
    assert [event.position for event in events] == [1, 2, 3]
    assert head == 3
    assert _count(migrated_dsn, "projects") == 3


def test_positions_are_gap_free_when_inline_projection_fails_and_rolls_back(open_catalog, migrated_dsn):
    project_id = uuid.uuid4()

    def warehouse(name: str) -> WarehouseCreated:
        return WarehouseCreated(
            warehouse_id=uuid.uuid4(),
            project_id=project_id,
            name=name,
            storage_profile={"type": "file", "location": "file:///wh"},
        )

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            store = catalog.store
            async with store.transaction(META) as tx:
                await tx.append(warehouse("demo"), expected_version=0)
            # The projection hits the read model's unique (project, name) key after the events were inserted.
            with pytest.raises(errors.UniqueViolation):
                await _write(store, (_project(), 0), (warehouse("DEMO"), 0))
            async with store.transaction(META) as tx:
                await tx.append(warehouse("other"), expected_version=0)
            return await store.read()

    events = asyncio.run(scenario())
    assert [event.position for event in events] == [1, 2]
    assert [event.decode().name for event in events] == ["demo", "other"]
    assert _count(migrated_dsn, "warehouses") == 2
    assert _count(migrated_dsn, "projects") == 0


def test_positions_are_gap_free_and_transactions_contiguous_when_writers_are_concurrent(open_catalog):
    writers = 40

    async def write(store, index: int) -> int:
        size = 1 + index % 3
        try:
            async with store.transaction(EventMetadata(actor=f"w{index}")) as tx:
                for _ in range(size):
                    await tx.append(_project(), expected_version=0)
                await asyncio.sleep(0)
                if index % 5 == 0:
                    raise BoomError
        except BoomError:
            return 0
        return size

    async def scenario():
        async with open_catalog(bootstrap=False, max_size=12) as catalog:
            written = await asyncio.gather(*(write(catalog.store, i) for i in range(writers)))
            return sum(written), await catalog.store.read(), await catalog.store.head()

    total, events, head = asyncio.run(scenario())
    assert total == sum(1 + i % 3 for i in range(writers) if i % 5 != 0)
    assert [event.position for event in events] == list(range(1, total + 1))
    assert head == total
    # Each transaction's events are one contiguous run with one commit id, actor and time.
    runs: list[list] = []
    for event in events:
        if runs and runs[-1][-1].commit_id == event.commit_id:
            runs[-1].append(event)
        else:
            runs.append([event])
    assert len({run[0].commit_id for run in runs}) == len(runs)
    for run in runs:
        actor = run[0].extensions["actor"]
        assert len(run) == 1 + int(actor.removeprefix("w")) % 3
        assert {event.time for event in run} == {run[0].time}
        assert {event.extensions["actor"] for event in run} == {actor}


def test_readers_only_ever_see_a_gap_free_prefix_when_writers_are_concurrent(open_catalog):
    async def scenario():
        async with open_catalog(bootstrap=False, max_size=10) as catalog:
            store = catalog.store
            done = asyncio.Event()
            snapshots: list[list[int]] = []

            async def write() -> None:
                async with store.transaction(META) as tx:
                    await tx.append(_project(), expected_version=0)
                    await asyncio.sleep(0.001)
                    await tx.append(_project(), expected_version=0)

            async def read() -> None:
                while not done.is_set():
                    snapshots.append([event.position for event in await store.read()])
                    await asyncio.sleep(0)

            reader = asyncio.create_task(read())
            await asyncio.gather(*(write() for _ in range(30)))
            done.set()
            await reader
            return snapshots, await store.read()

    snapshots, events = asyncio.run(scenario())
    assert [event.position for event in events] == list(range(1, 61))
    assert snapshots
    for seen in snapshots:
        assert seen == list(range(1, len(seen) + 1))
        assert len(seen) % 2 == 0  # never half a transaction


def test_append_raises_and_writes_nothing_when_expected_version_is_stale(open_catalog, migrated_dsn):
    namespace_id = uuid.uuid4()
    updated = NamespacePropertiesUpdated(
        namespace_id=namespace_id, warehouse_id=uuid.UUID(int=1), updated={"a": "1"}, removed=[]
    )

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            store = catalog.store
            async with store.transaction(META) as tx:
                await tx.append(_namespace_created(namespace_id), expected_version=0)
            with pytest.raises(StreamVersionConflictError) as raised:
                await _write(store, (_project(), 0), (updated, 0))
            return raised.value, await store.read(), await store.head()

    error, events, head = asyncio.run(scenario())
    assert (error.stream_id, error.expected, error.actual) == (f"namespace-{namespace_id}", 0, 1)
    assert [event.type for event in events] == [NamespaceCreated.type_name]
    assert head == 1
    assert _count(migrated_dsn, "projects") == 0
    with psycopg.connect(migrated_dsn) as conn:
        assert conn.execute("SELECT properties, version FROM namespaces").fetchall() == [({}, 1)]


def test_append_raises_when_expected_version_is_ahead_of_stream(open_catalog):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            with pytest.raises(StreamVersionConflictError) as raised:
                async with catalog.store.transaction(META) as tx:
                    await tx.append(_namespace_created(uuid.uuid4()), expected_version=3)
            return raised.value, await catalog.store.head()

    error, head = asyncio.run(scenario())
    assert (error.expected, error.actual) == (3, 0)
    assert head == 0


def test_append_counts_own_events_when_stream_is_appended_twice_in_one_transaction(open_catalog):
    namespace_id = uuid.uuid4()

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            async with catalog.store.transaction(META) as tx:
                await tx.append(_namespace_created(namespace_id), expected_version=0)
                await tx.append(
                    NamespacePropertiesUpdated(
                        namespace_id=namespace_id, warehouse_id=uuid.UUID(int=1), updated={"k": "v"}, removed=[]
                    ),
                    expected_version=1,
                )
                assert await tx.stream_version(f"namespace-{namespace_id}") == 2
            return await catalog.store.read()

    events = asyncio.run(scenario())
    assert [(event.stream_version, event.position) for event in events] == [(1, 1), (2, 2)]


def test_only_one_writer_wins_when_concurrent_appends_expect_the_same_version(open_catalog):
    namespace_id = uuid.uuid4()

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            store = catalog.store
            async with store.transaction(META) as tx:
                await tx.append(_namespace_created(namespace_id), expected_version=0)

            async def update(index: int) -> bool:
                event = NamespacePropertiesUpdated(
                    namespace_id=namespace_id, warehouse_id=uuid.UUID(int=1), updated={"i": str(index)}, removed=[]
                )
                try:
                    async with store.transaction(META) as tx:
                        await tx.append(event, expected_version=1)
                except StreamVersionConflictError:
                    return False
                return True

            outcomes = await asyncio.gather(*(update(i) for i in range(8)))
            return outcomes, await store.read()

    outcomes, events = asyncio.run(scenario())
    assert outcomes.count(True) == 1
    assert [event.stream_version for event in events] == [1, 2]


def test_unserialised_appends_race_on_the_stream_key_and_keep_positions_gap_free(open_catalog):
    namespace_id = uuid.uuid4()
    stream = f"namespace-{namespace_id}"

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            store = catalog.store
            async with store.transaction(META) as tx:
                await tx.append(_namespace_created(namespace_id), expected_version=0)

            async def update(index: int) -> StreamVersionConflictError | None:
                event = NamespacePropertiesUpdated(
                    namespace_id=namespace_id, warehouse_id=uuid.UUID(int=1), updated={"i": str(index)}, removed=[]
                )
                try:
                    async with store.transaction(META, serialised=False) as tx:
                        await tx.append(event, expected_version=1)
                except StreamVersionConflictError as conflict:
                    return conflict
                return None

            outcomes = await asyncio.gather(*(update(i) for i in range(8)))
            async with store.transaction(META, serialised=False) as tx:  # after the losers gave their numbers back
                await tx.append(_project(), expected_version=0)
            return outcomes, await store.read()

    outcomes, events = asyncio.run(scenario())
    losers = [outcome for outcome in outcomes if outcome is not None]
    assert len(losers) == 7
    assert {(loser.stream_id, loser.expected) for loser in losers} == {(stream, 1)}
    assert [event.position for event in events] == [1, 2, 3]
    assert [(event.stream_id, event.stream_version) for event in events[:2]] == [(stream, 1), (stream, 2)]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE catalog_events SET source = 'forged'",
        "UPDATE catalog_events SET data = '{}'::jsonb WHERE global_position = 1",
        "DELETE FROM catalog_events WHERE global_position = 1",
        "DELETE FROM catalog_events",
        "TRUNCATE catalog_events",
    ],
)
def test_database_rejects_change_when_statement_rewrites_the_log(open_catalog, migrated_dsn, statement):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog, catalog.store.transaction(META) as tx:
            await tx.append(_project(), expected_version=0)
            await tx.append(_project(), expected_version=0)

    asyncio.run(scenario())
    with psycopg.connect(migrated_dsn) as conn:
        before = conn.execute("SELECT * FROM catalog_events ORDER BY global_position").fetchall()
    with psycopg.connect(migrated_dsn) as conn, pytest.raises(errors.RestrictViolation, match="append-only"):
        conn.execute(statement)
    with psycopg.connect(migrated_dsn) as conn:
        assert conn.execute("SELECT * FROM catalog_events ORDER BY global_position").fetchall() == before
    assert len(before) == 2


def test_events_share_commit_id_and_time_when_appended_in_one_transaction(open_catalog):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            before = datetime.now(UTC)
            async with catalog.store.transaction(META) as tx:
                for _ in range(3):
                    await tx.append(_project(), expected_version=0)
            async with catalog.store.transaction(META) as tx:
                await tx.append(_project(), expected_version=0)
            after = datetime.now(UTC)
            return before, after, await catalog.store.read()

    before, after, events = asyncio.run(scenario())
    first, second = events[:3], events[3:]
    assert len({event.commit_id for event in first}) == 1
    assert len({event.time for event in first}) == 1
    assert second[0].commit_id != first[0].commit_id
    assert before <= first[0].time <= second[0].time <= after
    assert len({event.id for event in events}) == 4
    assert {event.commit_id for event in events}.isdisjoint({event.id for event in events})


def test_extensions_carry_actor_and_requestid_when_metadata_names_them(open_catalog):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            async with catalog.store.transaction(EventMetadata(actor="alice", request_id="req-1")) as tx:
                await tx.append(_project(), expected_version=0)
            async with catalog.store.transaction(EventMetadata(actor="bob")) as tx:
                await tx.append(_project(), expected_version=0)
            async with catalog.store.transaction(EventMetadata()) as tx:
                await tx.append(_project(), expected_version=0)
            return await catalog.store.read()

    events = asyncio.run(scenario())
    assert [event.extensions for event in events] == [
        {"actor": "alice", "requestid": "req-1"},
        {"actor": "bob"},
        {"actor": "anonymous"},
    ]


def test_recorded_events_carry_cloudevents_attributes_when_stored(open_catalog):
    project = _project()

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            async with catalog.store.transaction(META) as tx:
                await tx.append(project, expected_version=0)
            return await catalog.store.read()

    [event] = asyncio.run(scenario())
    assert event.source == "/catalog-es"
    assert event.type == ProjectCreated.type_name
    assert event.subject == event.stream_id == f"project-{project.project_id}"
    assert event.datacontenttype == "application/json"
    assert event.stream_version == 1
    assert event.decode() == project


def test_inline_projectors_see_exactly_the_stored_events_when_a_transaction_commits(open_catalog):
    seen = []

    async def spy(conn, events):
        seen.extend(events)
        await CATALOG.project(conn, events)

    async def scenario():
        async with open_catalog(bootstrap=False, projectors=[spy]) as catalog:
            async with catalog.store.transaction(META) as tx:
                await tx.append(_project(), expected_version=0)
                await tx.append(_namespace_created(uuid.uuid4()), expected_version=0)
            return await catalog.store.read()

    stored = asyncio.run(scenario())
    assert seen == stored


def test_transaction_writes_nothing_when_no_event_is_appended(open_catalog):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            async with catalog.store.transaction(META):
                pass
            return await catalog.store.read(), await catalog.store.head()

    assert asyncio.run(scenario()) == ([], 0)


def test_read_pages_and_tails_the_log_when_after_limit_or_last_is_given(open_catalog):
    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            store = catalog.store
            for _ in range(5):
                async with store.transaction(META) as tx:
                    await tx.append(_project(), expected_version=0)
            return (
                [e.position for e in await store.read(after=2)],
                [e.position for e in await store.read(after=1, limit=2)],
                [e.position for e in await store.read(last=2)],
            )

    assert asyncio.run(scenario()) == ([3, 4, 5], [2, 3], [4, 5])


def test_append_records_every_event_in_order_when_one_transaction_holds_thousands(open_catalog, migrated_dsn):
    namespaces = [_namespace_created(uuid.uuid4()) for _ in range(6_000)]  # over 65,535 parameters at 12 each

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            async with catalog.store.transaction(META) as tx:
                for event in namespaces:
                    await tx.append(event, expected_version=0)
            return await catalog.store.read(), await catalog.store.head()

    events, head = asyncio.run(scenario())
    assert head == 6_000
    assert [event.position for event in events] == list(range(1, 6_001))
    assert [event.subject for event in events] == [event.stream_id for event in namespaces]
    assert _count(migrated_dsn, "namespaces") == 6_000


def test_notification_names_the_head_and_the_kinds_appended_to_when_a_transaction_commits(open_catalog, migrated_dsn):
    """The followers of the log (warehouse cache, revocations) skip a commit that names none of their kinds."""

    async def scenario():
        async with (
            open_catalog(bootstrap=False) as catalog,
            await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as listening,
        ):
            await listening.execute(f"LISTEN {NOTIFY_CHANNEL}")
            namespace_id = uuid.uuid4()
            await _write(catalog.store, (_project(), 0), (_namespace_created(namespace_id), 0), (_project(), 0))
            notice = await anext(listening.notifies(timeout=10.0))
            return notice.payload, await catalog.store.head()

    payload, head = asyncio.run(scenario())
    assert payload == f"{head} namespace project"
