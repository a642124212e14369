"""Three `serve --workers 2` replicas behind haproxy on one PostgreSQL, relay and projectors on their own.

32 writers commit through the load balancer to one hot and four cold tables; one replica is killed and the
relay replaced mid-load. Every acknowledged commit is in the table's snapshots and in the log exactly once,
and the JetStream stream is the log, once. Prints commits/s and p99 (no threshold: figures, not a timed test).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg
import pytest
from msgspec import Struct

from projections.relay.binding import message_position
from tests.e2e.conftest import RunningCatalog, free_port, start_catalog
from tests.e2e.forked import ForkedProcess, spawn_server
from tests.e2e.rest_helpers import append_snapshot_updates, main_snapshot_id
from tests.integration.nats_server import NatsServer, read_stream, stream_count

pytestmark = [
    pytest.mark.replicas,
    pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed (apt-get install haproxy)"),
]

REPLICAS = 3
WRITERS = 32
COMMITS_PER_WRITER = 4  # acknowledged commits each writer makes: 128 in all
COLD_TABLES = 4
STREAM = "REPLICA_EVENTS"


class Cluster(Struct):
    replicas: list[RunningCatalog]
    lb_url: str
    dsn: str
    env: dict[str, str]
    nats: NatsServer
    helpers: dict[str, subprocess.Popen[bytes] | ForkedProcess]
    logs: Path


def _haproxy_config(lb_port: int, replicas: list[RunningCatalog]) -> str:
    servers = "\n".join(
        f"  server r{i} {replica.base_url.removeprefix('http://')} check" for i, replica in enumerate(replicas)
    )
    return f"""global
  maxconn 1024
defaults
  mode http
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  retries 2
  option redispatch
frontend catalog
  bind 127.0.0.1:{lb_port}
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /health
  default-server inter 300ms fall 1 rise 2
{servers}
"""


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)


def _kill_tree(process: subprocess.Popen[bytes] | ForkedProcess) -> None:
    """SIGKILL a process and its uvicorn workers (a replica dies as a whole, nothing drained)."""
    with_children = [*psutil.Process(process.pid).children(recursive=True), psutil.Process(process.pid)]
    for proc in with_children:
        proc.kill()
    psutil.wait_procs(with_children, timeout=30)


def _stop(process: subprocess.Popen[bytes] | ForkedProcess) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _kill_tree(process)


def _wait_healthy(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not become healthy")


@pytest.fixture
def cluster(pg_dsn: str, tmp_path: Path) -> Iterator[Cluster]:
    nats = NatsServer(tmp_path / "nats")
    nats.start()
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__WORKERS": "2",
        "CATALOG_ES__LOG_LEVEL": "warning",
        "CATALOG_ES__NATS__URL": nats.url,
        "CATALOG_ES__NATS__STREAM": STREAM,
    }
    replicas: list[RunningCatalog] = []
    helpers: dict[str, subprocess.Popen[bytes] | ForkedProcess] = {}
    try:
        for _ in range(REPLICAS):
            replicas.append(start_catalog(tmp_path / "data", env))
        lb_port = free_port()
        config = tmp_path / "haproxy.cfg"
        config.write_text(_haproxy_config(lb_port, replicas))
        helpers["haproxy"] = _spawn(["haproxy", "-f", str(config), "-db"], env, tmp_path / "haproxy.log")
        helpers["relay"] = spawn_server(["relay"], env, tmp_path / "relay.log")
        helpers["projector"] = spawn_server(["projector", "run", "--all"], env, tmp_path / "projector.log")
        lb_url = f"http://127.0.0.1:{lb_port}"
        _wait_healthy(lb_url)
        yield Cluster(replicas=replicas, lb_url=lb_url, dsn=pg_dsn, env=env, nats=nats, helpers=helpers, logs=tmp_path)
    finally:
        for process in [*helpers.values(), *(replica.process for replica in replicas)]:
            _stop(process)
        nats.stop()


class Outcome(Struct):
    table: str
    acknowledged: list[int]  # snapshot ids answered 200
    uncertain: list[int]  # no answer (the replica died): may or may not be committed
    latencies: list[float]


def _writer(lb_url: str, prefix: str, table: str, writer: int, outcome: Outcome, start: threading.Barrier) -> None:
    url = f"/catalog/v1/{prefix}/namespaces/load/tables/{table}"
    attempt = 0
    with httpx.Client(base_url=lb_url, timeout=120) as http:
        start.wait(timeout=60)
        while len(outcome.acknowledged) < COMMITS_PER_WRITER and attempt < 400:
            attempt += 1
            snapshot_id = 7_000_000_000 + writer * 10_000 + attempt
            try:
                loaded = http.get(url)
                if loaded.status_code != 200:
                    continue  # a replica going down: 502/503 from the balancer
                metadata = loaded.json()["metadata"]
                body: dict[str, Any] = {
                    "requirements": [
                        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": main_snapshot_id(metadata)}
                    ],
                    "updates": append_snapshot_updates(metadata, snapshot_id),
                }
                started = time.perf_counter()
                response = http.post(url, json=body)
            except httpx.TransportError:
                outcome.uncertain.append(snapshot_id)
                continue
            if response.status_code == 200:
                outcome.acknowledged.append(snapshot_id)
                outcome.latencies.append(time.perf_counter() - started)
            elif response.status_code >= 500:
                outcome.uncertain.append(snapshot_id)
            else:
                assert response.status_code == 409, response.text


def _events_adding(dsn: str, snapshot_id: int) -> int:
    """Commit events whose updates add this snapshot."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM catalog_events WHERE type = 'io.catalog-es.table.committed.v2' AND jsonb_path_exists("
            ' data, \'$.updates[*] ? (@.action == "add-snapshot" && @.snapshot."snapshot-id" == $id)\','
            " jsonb_build_object('id', %s::bigint))",
            (snapshot_id,),
        ).fetchone()
        return int(row[0]) if row else 0


def test_every_acknowledged_commit_is_kept_once_when_replicas_and_the_relay_fail_under_load(cluster: Cluster) -> None:
    http = httpx.Client(base_url=cluster.lb_url, timeout=60)
    profile = {"type": "file", "location": str(cluster.logs / "load")}
    created = http.post("/management/v1/warehouse", json={"warehouse-name": "load", "storage-profile": profile})
    prefix = created.json()["warehouse-id"]
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    assert http.post(f"/catalog/v1/{prefix}/namespaces", json={"namespace": ["load"]}).status_code == 200
    tables = ["hot", *(f"cold{i}" for i in range(COLD_TABLES))]
    for table in tables:
        made = http.post(f"/catalog/v1/{prefix}/namespaces/load/tables", json={"name": table, "schema": schema})
        assert made.status_code == 200, made.text
    # Half the writers on the hot table, the rest spread over the cold ones.
    outcomes = [
        Outcome(
            table="hot" if w % 2 == 0 else f"cold{(w // 2) % COLD_TABLES}", acknowledged=[], uncertain=[], latencies=[]
        )
        for w in range(WRITERS)
    ]
    start = threading.Barrier(WRITERS + 1)
    threads = [
        threading.Thread(target=_writer, args=(cluster.lb_url, prefix, o.table, w, o, start), daemon=True)
        for w, o in enumerate(outcomes)
    ]
    for thread in threads:
        thread.start()
    start.wait(timeout=60)
    began = time.perf_counter()
    # Mid-load: a replica dies (SIGKILL, with its workers), and the relay is replaced by a new process.
    while sum(len(o.acknowledged) for o in outcomes) < WRITERS and any(t.is_alive() for t in threads):
        time.sleep(0.05)
    _kill_tree(cluster.replicas[1].process)
    _kill_tree(cluster.helpers["relay"])
    cluster.helpers["relay"] = spawn_server(["relay"], cluster.env, cluster.logs / "relay.log")
    for thread in threads:
        thread.join(timeout=600)
    elapsed = time.perf_counter() - began

    acknowledged = {table: [s for o in outcomes if o.table == table for s in o.acknowledged] for table in tables}
    uncertain = {s for o in outcomes for s in o.uncertain}
    snapshots = {}
    for table in tables:
        metadata = http.get(f"/catalog/v1/{prefix}/namespaces/load/tables/{table}").json()["metadata"]
        snapshots[table] = [snapshot["snapshot-id"] for snapshot in metadata.get("snapshots", [])]
    every = sorted(s for ids in acknowledged.values() for s in ids)
    in_log = {s: _events_adding(cluster.dsn, s) for s in every}
    with psycopg.connect(cluster.dsn) as conn:
        head_row = conn.execute("SELECT position FROM catalog_event_counter").fetchone()
        log = [(int(p), str(i)) for p, i in conn.execute("SELECT global_position, id FROM catalog_events ORDER BY 1")]
    head = int(head_row[0]) if head_row else 0
    deadline = time.monotonic() + 120
    while asyncio.run(stream_count(cluster.nats.url, STREAM)) < head and time.monotonic() < deadline:
        time.sleep(0.2)
    messages = asyncio.run(read_stream(cluster.nats.url, STREAM))
    latencies = sorted(latency for o in outcomes for latency in o.latencies)
    p99 = latencies[int(0.99 * (len(latencies) - 1))] if latencies else float("nan")
    print(
        f"\n{REPLICAS} replicas x 2 workers behind haproxy, {WRITERS} writers: {len(every)} commits acknowledged"
        f" in {elapsed:.1f} s = {len(every) / elapsed:.1f} commits/s, p99 {p99 * 1000:.0f} ms,"
        f" {len(uncertain)} unanswered (replica killed), 0 lost"
    )

    assert all(not thread.is_alive() for thread in threads)
    assert all(len(o.acknowledged) == COMMITS_PER_WRITER for o in outcomes), [len(o.acknowledged) for o in outcomes]
    for table in tables:
        kept = snapshots[table]
        assert len(kept) == len(set(kept)), table  # no snapshot twice
        assert set(acknowledged[table]) <= set(kept), table  # nothing acknowledged lost
        assert set(kept) - set(acknowledged[table]) <= uncertain, table  # nothing committed that was refused
    assert set(in_log.values()) == {1}  # each acknowledged commit is one event in the log
    assert [m.seq for m in messages] == list(range(1, len(log) + 1))  # the stream is the log, once
    assert [(message_position(m.headers, m.data), m.headers["Nats-Msg-Id"]) for m in messages] == log
