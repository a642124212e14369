"""Relay benchmark: catch-up publish throughput and commit → consumer latency (p50/p99), real PostgreSQL + NATS.

Run: `python -m tests.bench.bench_relay [--events 20000] [--commits 500]` (or `task bench:relay`). Not a pytest module.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nats
import psycopg
from nats.js.api import ConsumerConfig, DeliverPolicy
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from api.runtime.database import migrate
from api.runtime.embedded_nats import start_embedded_nats
from api.runtime.embedded_postgres import embedded_dsn
from catalog_es.clock import RandomIds, SystemClock
from catalog_es.events import NamespaceCreated
from catalog_es.store.database import open_pool
from catalog_es.store.eventstore import EventMetadata, EventStore
from projections.registry import CATALOG

STREAM = "BENCH_EVENTS"
META = EventMetadata(actor="bench")
WAREHOUSE = uuid.UUID(int=1)


def _fresh_database(work: Path) -> str:
    admin = os.environ.get("CATALOG_ES_TEST_PG_DSN") or embedded_dsn(work / "pg-data")
    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(admin)
    params["dbname"] = name
    return make_conninfo(**params)


def _namespace(index: int) -> NamespaceCreated:
    return NamespaceCreated(namespace_id=uuid.uuid4(), warehouse_id=WAREHOUSE, namespace=[f"n{index}"], properties={})


async def _append(store: EventStore, count: int, per_transaction: int) -> None:
    for start in range(0, count, per_transaction):
        async with store.transaction(META) as tx:
            for index in range(start, min(count, start + per_transaction)):
                await tx.append(_namespace(index), expected_version=0)


def _start_relay(dsn: str, url: str, log: Path, batch_size: int) -> subprocess.Popen[bytes]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}
    env |= {
        "CATALOG_ES__PG_DSN": dsn,
        "CATALOG_ES__NATS__URL": url,
        "CATALOG_ES__NATS__STREAM": STREAM,
        "CATALOG_ES__NATS__BATCH_SIZE": str(batch_size),
    }
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "api", "relay"], env=env, stdout=out, stderr=subprocess.STDOUT)


async def _stream_messages(url: str) -> int:
    client = await nats.connect(url)
    try:
        return int((await client.jetstream().stream_info(STREAM)).state.messages)
    except nats.js.errors.NotFoundError:
        return 0
    finally:
        await client.close()


async def _throughput(dsn: str, url: str, work: Path, events: int, batch_size: int) -> float:
    """Events already in the log, relay started cold: messages acknowledged per second until caught up."""
    pool = await open_pool(dsn, min_size=1, max_size=2)
    try:
        store = EventStore(pool, clock=SystemClock(), ids=RandomIds(), inline_projectors=[CATALOG.project])
        await _append(store, events, per_transaction=500)
    finally:
        await pool.close()
    relay = _start_relay(dsn, url, work / "relay-throughput.log", batch_size)
    try:
        deadline = time.monotonic() + 600
        while await _stream_messages(url) == 0:
            if time.monotonic() > deadline:
                raise RuntimeError("relay never published")
            await asyncio.sleep(0.001)
        started = time.monotonic()
        while await _stream_messages(url) < events:
            if time.monotonic() > deadline:
                raise RuntimeError("relay did not catch up")
            await asyncio.sleep(0.01)
        return events / (time.monotonic() - started)
    finally:
        relay.terminate()
        relay.wait(timeout=30)


async def _latency(dsn: str, url: str, work: Path, commits: int, rate: float) -> list[float]:
    """One commit at a time at `rate`/s; latency = consumer receipt - commit returned (milliseconds)."""
    relay = _start_relay(dsn, url, work / "relay-latency.log", 500)
    client = await nats.connect(url)
    pool = await open_pool(dsn, min_size=1, max_size=2)
    received: dict[str, float] = {}
    try:
        store = EventStore(pool, clock=SystemClock(), ids=RandomIds(), inline_projectors=[CATALOG.project])
        async with store.transaction(META) as tx:  # then wait for the relay to be up and caught up
            await tx.append(_namespace(20_000_000), expected_version=0)
        before = await store.head()
        deadline = time.monotonic() + 120
        while await _stream_messages(url) < before:
            if time.monotonic() > deadline:
                raise RuntimeError("relay did not start")
            await asyncio.sleep(0.05)

        async def on_message(message: nats.aio.msg.Msg) -> None:
            received[message.header["Nats-Msg-Id"] if message.header else ""] = time.monotonic()

        await client.jetstream().subscribe(
            "catalog.>",
            stream=STREAM,
            cb=on_message,
            ordered_consumer=True,
            config=ConsumerConfig(deliver_policy=DeliverPolicy.NEW),
        )
        committed: dict[str, float] = {}
        for index in range(commits):
            async with store.transaction(META) as tx:
                await tx.append(_namespace(10_000_000 + index), expected_version=0)
            committed_at = time.monotonic()
            [event] = await store.read(after=before + index, limit=1)
            committed[str(event.id)] = committed_at
            await asyncio.sleep(1 / rate)
        deadline = time.monotonic() + 60
        while len(set(committed) & set(received)) < commits and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        return [(received[event_id] - at) * 1000 for event_id, at in committed.items() if event_id in received]
    finally:
        await pool.close()
        await client.close()
        relay.terminate()
        relay.wait(timeout=30)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def main(events: int, commits: int, rate: float, batch_size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="catalog-es-bench-") as directory:
        work = Path(directory)
        server = start_embedded_nats(work, join=False)
        try:
            dsn = _fresh_database(work)
            await migrate(dsn)
            throughput = await _throughput(dsn, server.url, work, events, batch_size)
            print(
                f"publish throughput (cold catch-up, {events} events, batch {batch_size}): {throughput:,.0f} events/s"
            )
            latencies = await _latency(dsn, server.url, work, commits, rate)
            print(
                f"commit → consumer latency ({len(latencies)}/{commits} commits at {rate:g}/s):"
                f" p50 {statistics.median(latencies):.2f} ms, p99 {_percentile(latencies, 0.99):.2f} ms,"
                f" max {max(latencies):.2f} ms"
            )
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--commits", type=int, default=500)
    parser.add_argument("--rate", type=float, default=100.0, help="commits per second in the latency run")
    parser.add_argument("--batch-size", type=int, default=500)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.events, arguments.commits, arguments.rate, arguments.batch_size))
