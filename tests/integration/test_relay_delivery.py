"""The NATS relay against real JetStream: every event once, in log order, through outages and restarts."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import msgspec
import psycopg
import pytest

from catalog_es.events import NamespaceCreated, TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata, EventStore
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import DropTable, RenameTable, handle_drop_table, handle_rename_table
from projections.relay.binding import message_position, to_document, to_message
from projections.relay.config import RelayConfig, StreamOptions
from projections.relay.jetstream import JetStreamPublisher, StreamMismatchError
from projections.relay.relay import Relay, RelayConflictError
from tests.integration.nats_server import eventually, read_stream, stream_count

META = EventMetadata(actor="alice", request_id="req-relay")
STREAM = "TEST_EVENTS"
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


def _config(url: str, **overrides) -> RelayConfig:
    fast = {
        "stream": STREAM,
        "poll_seconds": 0.2,
        "standby_retry_seconds": 0.2,
        "backoff_max_seconds": 0.5,
        "ack_timeout_seconds": 3.0,
    }
    return RelayConfig(url=url, **{**fast, **overrides})


async def _commit_namespaces(store: EventStore, warehouse_id: uuid.UUID, names: range) -> None:
    for index in names:
        async with store.transaction(META) as tx:
            event = NamespaceCreated(
                namespace_id=uuid.uuid4(), warehouse_id=warehouse_id, namespace=[f"ns{index}"], properties={}
            )
            await tx.append(event, expected_version=0)


@contextlib.asynccontextmanager
async def _running(relay: Relay):
    task = asyncio.create_task(relay.run())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _log(dsn: str) -> list[tuple[int, str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT global_position, id::text, type FROM catalog_events ORDER BY 1").fetchall()
        return [(int(position), str(event_id), str(event_type)) for position, event_id, event_type in rows]


def _checkpoint(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT position FROM relay_checkpoints WHERE name = %s", (STREAM,)).fetchone()
        return int(row[0]) if row else 0


def _assert_stream_is_the_log(messages, log) -> None:
    """Exactly the log: one message per event, in log order, each carrying its own id and position."""
    assert [message.seq for message in messages] == list(range(1, len(log) + 1))
    assert [(message_position(m.headers, m.data), m.headers["Nats-Msg-Id"]) for m in messages] == [
        (position, event_id) for position, event_id, _ in log
    ]
    assert [m.headers["ce-type"] for m in messages] == [event_type for _, _, event_type in log]


def test_stream_holds_each_event_once_in_log_order_when_nats_stops_and_restarts_during_1000_commits(
    open_catalog, migrated_dsn, nats_server
):
    async def scenario():
        async with open_catalog() as catalog:
            relay = Relay(migrated_dsn, _config(nats_server.url, batch_size=100))
            async with _running(relay):
                await _commit_namespaces(catalog.store, catalog.warehouse_id, range(300))
                await asyncio.to_thread(nats_server.stop)
                await _commit_namespaces(catalog.store, catalog.warehouse_id, range(300, 700))
                await eventually(lambda: _true(relay.metrics.errors_total > 0), what="the relay to notice")
                lag_during_outage = relay.metrics.lag_positions
                await asyncio.to_thread(nats_server.start)
                await _commit_namespaces(catalog.store, catalog.warehouse_id, range(700, 1000))
                head = await catalog.store.head()
                await eventually(lambda: _at_least(nats_server.url, head), what=f"{head} messages")
                await asyncio.sleep(0.3)  # room for a (wrong) duplicate to show up
            return head, lag_during_outage, relay.metrics, await read_stream(nats_server.url, STREAM)

    head, lag_during_outage, metrics, messages = asyncio.run(scenario())
    log = _log(migrated_dsn)
    assert head == len(log) == 1002  # bootstrap's project and warehouse, then 1000 commits
    _assert_stream_is_the_log(messages, log)
    assert lag_during_outage > 0
    assert metrics.published_position == head
    assert metrics.lag_positions == 0
    assert _checkpoint(migrated_dsn) == head
    namespace_subjects = [m.subject for m in messages if m.headers["ce-type"] == NamespaceCreated.type_name]
    assert all(subject.startswith("catalog.") and ".namespace.created." in subject for subject in namespace_subjects)


async def _true(value: bool) -> bool:
    return value


async def _at_least(url: str, count: int) -> bool:
    return await stream_count(url, STREAM) >= count


def test_relay_resumes_after_the_streams_last_message_when_checkpoint_lags_beyond_the_dedup_window(
    open_catalog, migrated_dsn, nats_server
):
    """A crash after the acks but before the checkpoint, then an outage longer than the dedup window."""

    async def scenario():
        async with open_catalog() as catalog:
            config = _config(nats_server.url, duplicate_window_seconds=0.5)
            await _commit_namespaces(catalog.store, catalog.warehouse_id, range(20))
            async with _running(Relay(migrated_dsn, config)):
                await eventually(lambda: _at_least(nats_server.url, 22), what="22 messages")
            with psycopg.connect(migrated_dsn, autocommit=True) as conn:
                conn.execute("UPDATE relay_checkpoints SET position = 3")
            await asyncio.sleep(1.0)  # the broker has forgotten every Nats-Msg-Id by now
            await _commit_namespaces(catalog.store, catalog.warehouse_id, range(20, 25))
            relay = Relay(migrated_dsn, config)
            async with _running(relay):
                await eventually(lambda: _at_least(nats_server.url, 27), what="27 messages")
                await asyncio.sleep(0.5)
            return relay.metrics, await read_stream(nats_server.url, STREAM)

    metrics, messages = asyncio.run(scenario())
    _assert_stream_is_the_log(messages, _log(migrated_dsn))
    assert metrics.published_total == 5
    assert _checkpoint(migrated_dsn) == 27


def test_broker_drops_republished_events_when_their_msg_id_is_inside_the_dedup_window(open_catalog, nats_server):
    async def scenario():
        async with open_catalog() as catalog:
            await _commit_namespaces(catalog.store, catalog.warehouse_id, range(10))
            messages = [to_message(event, prefix="catalog", mode="binary") for event in await catalog.store.read()]
        publisher = await JetStreamPublisher.connect(nats_server.url, name="test")
        try:
            await publisher.ensure_stream(StreamOptions(name=STREAM, subjects=["catalog.>"]))
            first = await publisher.publish(messages, expected_last_seq=0)
            again = await publisher.publish(messages, expected_last_seq=None)
        finally:
            await publisher.close()
        return first, again, await stream_count(nats_server.url, STREAM)

    first, again, count = asyncio.run(scenario())
    assert (first.last_seq, first.duplicates) == (12, 0)
    assert (again.last_seq, again.duplicates) == (12, 12)
    assert count == 12


def test_relay_refuses_to_publish_when_the_stream_ends_with_another_logs_event(open_catalog, migrated_dsn, nats_server):
    async def scenario():
        async with open_catalog() as catalog:
            foreign = [to_message(event, prefix="catalog", mode="binary") for event in await catalog.store.read()]
        stranger = msgspec.structs.replace(foreign[0], msg_id=str(uuid.uuid4()))
        stranger = msgspec.structs.replace(stranger, headers={**stranger.headers, "Nats-Msg-Id": stranger.msg_id})
        publisher = await JetStreamPublisher.connect(nats_server.url, name="test")
        try:
            await publisher.ensure_stream(StreamOptions(name=STREAM, subjects=["catalog.>"]))
            await publisher.publish([stranger], expected_last_seq=0)
        finally:
            await publisher.close()
        with pytest.raises(RelayConflictError, match="not this catalog's event"):
            await asyncio.wait_for(Relay(migrated_dsn, _config(nats_server.url)).run(), timeout=30)
        return await stream_count(nats_server.url, STREAM)

    assert asyncio.run(scenario()) == 1


def test_structured_mode_payload_is_the_cloudevent_and_restart_resumes_from_it(open_catalog, migrated_dsn, nats_server):
    async def scenario():
        async with open_catalog() as catalog:
            config = _config(nats_server.url, content_mode="structured")
            async with _running(Relay(migrated_dsn, config)):
                await eventually(lambda: _at_least(nats_server.url, 2), what="2 messages")
            with psycopg.connect(migrated_dsn, autocommit=True) as conn:
                conn.execute("UPDATE relay_checkpoints SET position = 0")
            await _commit_namespaces(catalog.store, catalog.warehouse_id, range(3))
            async with _running(Relay(migrated_dsn, config)):
                await eventually(lambda: _at_least(nats_server.url, 5), what="5 messages")
                await asyncio.sleep(0.3)
            return await read_stream(nats_server.url, STREAM)

    messages = asyncio.run(scenario())
    log = _log(migrated_dsn)
    assert [m.headers["Content-Type"] for m in messages] == ["application/cloudevents+json"] * 5
    documents = [to_document(m.headers, m.data) for m in messages]
    assert [(d["position"], d["id"], d["type"]) for d in documents] == log
    assert documents[-1]["data"]["namespace"] == ["ns2"]
    assert documents[-1]["actor"] == "alice"


def test_lakekeeper_compat_adds_lakekeeper_events_with_names_as_they_were_at_each_event(
    open_catalog, migrated_dsn, nats_server
):
    db, other = Namespace(("db",)), Namespace(("other",))

    async def scenario():
        async with open_catalog() as catalog:
            ctx, warehouse = catalog.ctx, catalog.warehouse_id
            for namespace in (db, other):
                await handle_create_namespace(CreateNamespace(warehouse, namespace, {}, META), ctx)
            await handle_create_table(CreateTable(warehouse, db, "t", SCHEMA, META), ctx)
            update = [{"action": "set-properties", "updates": {"k": "v"}}]
            await handle_commit_table(CommitTable(warehouse, db, "t", [], update, META), ctx)
            await handle_rename_table(RenameTable(warehouse, db, "t", other, "u", META), ctx)
            await handle_commit_table(CommitTable(warehouse, other, "u", [], update, META), ctx)
            await handle_drop_table(DropTable(warehouse, other, "u", False, META), ctx)
            head = await catalog.store.head()
            # Started only now: every name is looked up in the log as of its event, not taken from today.
            async with _running(Relay(migrated_dsn, _config(nats_server.url, lakekeeper_compat=True))):
                await eventually(lambda: _at_least(nats_server.url, head + 5), what="the Lakekeeper events")
            [created] = [event for event in await catalog.store.read() if event.type == TableCreated.type_name]
            return created, head, await read_stream(nats_server.url, STREAM)

    created, head, messages = asyncio.run(scenario())
    ours = [m for m in messages if m.subject != "catalog.lakekeeper"]
    lakekeeper = [msgspec.json.decode(m.data) for m in messages if m.subject == "catalog.lakekeeper"]
    assert len(ours) == head
    assert [event["type"] for event in lakekeeper] == [
        "createTable",
        "updateTable",
        "renameTable",
        "updateTable",
        "dropTable",
    ]
    assert [(event["namespace"], event["name"]) for event in lakekeeper] == [
        ("db", "t"),
        ("db", "t"),
        ("other", "u"),
        ("other", "u"),
        ("other", "u"),
    ]
    table_id = created.data["table_id"]
    for event in lakekeeper:
        assert event["tabular-id"] == table_id
        assert event["tabular-type"] == "table"
        assert event["actor"] == '{"type":"principal","principal":"alice"}'
        assert event["warehouse-id"] == event["prefix"]
    assert lakekeeper[0]["data"]["name"] == "t"
    assert lakekeeper[0]["data"]["schema"]["fields"][0]["name"] == "id"
    assert lakekeeper[1]["data"]["identifier"] == {"namespace": ["db"], "name": "t"}
    assert lakekeeper[2]["data"] == {
        "source": {"namespace": ["db"], "name": "t"},
        "destination": {"namespace": ["other"], "name": "u"},
    }
    assert lakekeeper[3]["data"]["identifier"] == {"namespace": ["other"], "name": "u"}
    assert lakekeeper[4]["data"] is None
    # Each Lakekeeper event follows the catalog event it mirrors.
    for index, message in enumerate(messages):
        if message.subject == "catalog.lakekeeper":
            assert message_position(message.headers, message.data) == message_position(
                messages[index - 1].headers, messages[index - 1].data
            )


def test_event_too_large_for_the_server_arrives_without_data_and_flagged_when_relayed(
    open_catalog, migrated_dsn, nats_server
):
    huge = "x" * (9 * 1024 * 1024)  # the embedded server accepts 8 MiB per message

    async def scenario():
        async with open_catalog() as catalog:
            async with catalog.store.transaction(META) as tx:
                event = NamespaceCreated(
                    namespace_id=uuid.uuid4(),
                    warehouse_id=catalog.warehouse_id,
                    namespace=["big"],
                    properties={"k": huge},
                )
                await tx.append(event, expected_version=0)
            await _commit_namespaces(catalog.store, catalog.warehouse_id, range(2))
            relay = Relay(migrated_dsn, _config(nats_server.url))
            async with _running(relay):
                await eventually(lambda: _at_least(nats_server.url, 5), what="5 messages")
            return relay.metrics, await read_stream(nats_server.url, STREAM)

    metrics, messages = asyncio.run(scenario())
    _assert_stream_is_the_log(messages, _log(migrated_dsn))
    big = messages[2]
    assert (big.headers["ce-dataomitted"], big.data) == ("true", b"")
    assert "ce-datacontenttype" not in big.headers
    assert metrics.data_omitted_total == 1
    assert msgspec.json.decode(messages[3].data)["namespace"] == ["ns0"]


def test_relay_stops_with_a_clear_error_when_the_stream_exists_without_its_subjects(migrated_dsn, nats_server):
    async def scenario():
        publisher = await JetStreamPublisher.connect(nats_server.url, name="test")
        try:
            await publisher.ensure_stream(StreamOptions(name=STREAM, subjects=["elsewhere.>"]))
        finally:
            await publisher.close()
        with pytest.raises(StreamMismatchError, match=r"does not capture \['catalog.>'\]"):
            await asyncio.wait_for(Relay(migrated_dsn, _config(nats_server.url)).run(), timeout=30)

    asyncio.run(scenario())


def test_commit_messages_carry_the_change_and_stay_small_when_the_table_has_a_long_history(
    open_catalog, migrated_dsn, nats_server
):
    db = Namespace(("db",))
    commits = 300

    async def scenario():
        async with open_catalog() as catalog:
            ctx, warehouse = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(warehouse, db, {}, META), ctx)
            created = await handle_create_table(CreateTable(warehouse, db, "t", SCHEMA, META), ctx)
            location = created.metadata["location"]
            for step in range(1, commits + 1):
                snapshot = {
                    "snapshot-id": step,
                    "sequence-number": step,
                    "timestamp-ms": 1_700_000_000_000 + step,
                    "manifest-list": f"{location}/metadata/snap-{step}-{uuid.uuid4()}.avro",
                    "summary": {"operation": "append", "added-records": "1", "total-records": str(step)},
                    "schema-id": 0,
                    **({"parent-snapshot-id": step - 1} if step > 1 else {}),
                }
                updates = [
                    {"action": "add-snapshot", "snapshot": snapshot},
                    {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": step},
                ]
                await handle_commit_table(CommitTable(warehouse, db, "t", [], updates, META), ctx)
            head = await catalog.store.head()
            async with _running(Relay(migrated_dsn, _config(nats_server.url, lakekeeper_compat=True))):
                await eventually(lambda: _at_least(nats_server.url, head + commits + 1), what="every event")
            return await read_stream(nats_server.url, STREAM)

    messages = asyncio.run(scenario())
    ours = [m for m in messages if m.subject.startswith("catalog.") and ".table.committed." in m.subject]
    lakekeeper = [m for m in messages if m.subject == "catalog.lakekeeper"]
    assert len(ours) == commits
    assert max(len(m.data) for m in [*ours, *lakekeeper]) < 64 * 1024  # whatever the table's age (issue 28)
    last = msgspec.json.decode(ours[-1].data)
    assert "metadata" not in last
    assert last["metadata_location"].endswith(".metadata.json")
    assert [u["action"] for u in last["updates"]] == ["add-snapshot", "set-snapshot-ref"]
    assert len(msgspec.json.decode(lakekeeper[-1].data)["data"]["updates"]) == 2
