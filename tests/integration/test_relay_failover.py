"""`catalog-es relay` processes killed with SIGKILL: no gap, no duplicate, and a standby takes over."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from catalog_es.events import ProjectCreated
from catalog_es.store.eventstore import EventMetadata, EventStore
from projections.checkpoints import RelayStatus, relay_status
from projections.relay.binding import message_position
from tests.e2e.forked import ForkedProcess, run_cli, spawn_server
from tests.integration.nats_server import eventually, read_stream, stream_count

STREAM = "FAILOVER_EVENTS"
META = EventMetadata(actor="bob")


def _env(dsn: str, nats_url: str, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}
    return env | {
        "CATALOG_ES__PG_DSN": dsn,
        "CATALOG_ES__NATS__URL": nats_url,
        "CATALOG_ES__NATS__STREAM": STREAM,
        **{f"CATALOG_ES__{key.upper()}": value for key, value in extra.items()},
    }


def _start_relay(env: dict[str, str], log: Path) -> subprocess.Popen[bytes] | ForkedProcess:
    return spawn_server(["relay"], env, log)


def _stop(process: subprocess.Popen[bytes] | ForkedProcess) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _kill(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=15)


async def _append_projects(store: EventStore, transactions: int, per_transaction: int) -> None:
    for _ in range(transactions):
        async with store.transaction(META) as tx:
            for _ in range(per_transaction):
                await tx.append(ProjectCreated(project_id=uuid.uuid4(), name="p"), expected_version=0)


async def _status(dsn: str) -> RelayStatus:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        return await relay_status(conn, STREAM, datetime.now(UTC))


def _assert_stream_is_the_log(messages, dsn: str) -> None:
    with psycopg.connect(dsn) as conn:
        log = [(int(p), str(i)) for p, i in conn.execute("SELECT global_position, id FROM catalog_events ORDER BY 1")]
    assert [m.seq for m in messages] == list(range(1, len(log) + 1))
    assert [(message_position(m.headers, m.data), m.headers["Nats-Msg-Id"]) for m in messages] == log


def test_stream_has_no_gap_and_no_duplicate_when_the_relay_is_killed_mid_batch_and_restarted(
    open_catalog, migrated_dsn, nats_server, tmp_path
):
    batch = 5000  # of 6000 events: publishing one batch takes long enough to be killed in the middle
    env = _env(migrated_dsn, nats_server.url, nats__batch_size=str(batch))
    log = tmp_path / "relay.log"

    async def scenario():
        async with open_catalog(bootstrap=False) as catalog:
            await _append_projects(catalog.store, transactions=40, per_transaction=150)
            head = await catalog.store.head()
        first = _start_relay(env, log)
        try:
            await eventually(
                lambda: _more_than(nats_server.url, 0), within=60, every=0.002, what="the first published message"
            )
            _kill(first)
        finally:
            _stop(first)
        at_kill = (await stream_count(nats_server.url, STREAM), (await _status(migrated_dsn)).checkpoint)
        second = _start_relay(env, log)
        try:
            await eventually(lambda: _more_than(nats_server.url, head - 1), within=60, what=f"{head} messages")
            await asyncio.sleep(0.5)  # room for a (wrong) duplicate to show up
        finally:
            _stop(second)
        return head, at_kill, await read_stream(nats_server.url, STREAM)

    head, (on_stream, checkpoint), messages = asyncio.run(scenario())
    print(f"killed with {on_stream} of {head} events on the stream, checkpoint at {checkpoint}")
    assert 0 < on_stream < batch, "the relay was killed in the middle of its first batch"
    assert checkpoint == 0
    _assert_stream_is_the_log(messages, migrated_dsn)
    assert b"relay.resumed" in log.read_bytes()


async def _more_than(url: str, count: int) -> bool:
    return await stream_count(url, STREAM) > count


def _relay_pid(status: RelayStatus) -> int | None:
    application = status.leader_application or ""
    return int(application.rsplit(" ", 1)[1]) if application.startswith("catalog-es relay ") else None


def test_standby_relay_takes_over_when_the_leader_is_killed(open_catalog, migrated_dsn, nats_server, tmp_path):
    env = _env(migrated_dsn, nats_server.url)
    logs = [tmp_path / "relay-a.log", tmp_path / "relay-b.log"]

    async def leader_among(processes) -> int:
        pids = {process.pid for process in processes}

        async def elected() -> bool:
            return _relay_pid(await _status(migrated_dsn)) in pids

        await eventually(elected, within=60, what="a leader")
        pid = _relay_pid(await _status(migrated_dsn))
        assert pid is not None
        return pid

    async def scenario():
        relays = [_start_relay(env, logs[0]), _start_relay(env, logs[1])]
        try:
            async with open_catalog(bootstrap=False) as catalog:
                first_leader = await leader_among(relays)
                await asyncio.sleep(1.5)  # both are up: one leads, the other stands by
                await _append_projects(catalog.store, transactions=50, per_transaction=1)
                await eventually(lambda: _more_than(nats_server.url, 49), what="50 messages")
                leader = next(process for process in relays if process.pid == first_leader)
                standby = next(process for process in relays if process.pid != first_leader)
                assert standby.poll() is None
                _kill(leader)
                await _append_projects(catalog.store, transactions=50, per_transaction=1)
                second_leader = await leader_among([standby])
                await eventually(lambda: _more_than(nats_server.url, 99), what="100 messages")
                await asyncio.sleep(0.5)
                standby_log = logs[relays.index(standby)]
                return first_leader, second_leader, standby_log, await _status(migrated_dsn)
        finally:
            for process in relays:
                _stop(process)

    first_leader, second_leader, standby_log, status = asyncio.run(scenario())
    assert second_leader != first_leader
    assert (status.checkpoint, status.head, status.lag_positions) == (100, 100, 0)
    _assert_stream_is_the_log(asyncio.run(read_stream(nats_server.url, STREAM)), migrated_dsn)
    standby_said = standby_log.read_text()
    assert standby_said.index("relay.standby") < standby_said.index("relay.leading")


def test_relay_status_prints_checkpoint_head_lag_and_leader_as_json(migrated_dsn, nats_server):
    result = run_cli(["relay", "--status"], _env(migrated_dsn, nats_server.url), timeout=120, check=True)
    status = json.loads(result.stdout)
    assert status == {
        "relay": STREAM,
        "checkpoint": 0,
        "head": 0,
        "lag_positions": 0,
        "lag_seconds": 0.0,
        "leader_pid": None,
        "leader_application": None,
    }
