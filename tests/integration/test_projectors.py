"""Projector processes, rebuild and verify on a real PostgreSQL: killed mid-batch, rebuilt under live writes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import psycopg
from eventsourcing.persistence import IntegrityError, Tracking
from litestar.testing import TestClient

from api.app import create_app
from api.settings import load_settings
from catalog_es.events import NamespaceCreated, TableCommitted
from catalog_es.store.eventstore import EventMetadata, EventStore
from projections.checkpoints import insert_tracking, load_checkpoint, lock_checkpoint
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG, PROJECTIONS, SEARCH, STATISTICS
from projections.runner import ProjectorRunner
from projections.verify import verify_projection
from tests.e2e.forked import ForkedProcess, run_cli, spawn_server
from tests.integration.test_rebuild import _build_catalog

META = EventMetadata(actor="projector-tests")


def _env(dsn: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}
    return env | {"CATALOG_ES__PG_DSN": dsn}


def _cli(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(args, _env(dsn), timeout=120)


async def _create_namespaces(store: EventStore, warehouse_id: uuid.UUID, transactions: int, per: int) -> int:
    for _ in range(transactions):
        async with store.transaction(META) as tx:
            for _ in range(per):
                name = f"ns_{uuid.uuid4().hex[:12]}"
                event = NamespaceCreated(
                    namespace_id=uuid.uuid4(), warehouse_id=warehouse_id, namespace=[name], properties={"k": "v"}
                )
                await tx.append(event, expected_version=0)
    return transactions * per


def _scalar(dsn: str, query: str, *params: object) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query, params).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def _checkpoint(dsn: str) -> int:
    return _scalar(dsn, "SELECT position FROM projector_checkpoints WHERE name = 'catalog_statistics'")


def _head(dsn: str) -> int:
    return _scalar(dsn, "SELECT position FROM catalog_event_counter")


def _stop(process: subprocess.Popen[bytes] | ForkedProcess) -> None:
    process.terminate()
    try:
        assert process.wait(timeout=15) == 0, "SIGTERM should stop the projector cleanly"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=15)


def _wait(condition, timeout: float = 30.0, interval: float = 0.005) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(interval)


async def _verify(dsn: str) -> list:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        return [await verify_projection(conn, p) for p in PROJECTIONS]


def test_read_model_equals_a_clean_rebuild_when_the_projector_is_killed_mid_batch_and_restarted(
    open_catalog, migrated_dsn, tmp_path: Path
):
    async def seed() -> int:
        async with open_catalog() as catalog:
            return await _create_namespaces(catalog.store, catalog.warehouse_id, 40, 100)

    created = asyncio.run(seed())
    head = _head(migrated_dsn)
    log = tmp_path / "projector.log"
    command = ["projector", "run", "catalog_statistics", "--batch-size", "50", "--poll-seconds", "0.2"]
    first = spawn_server(command, _env(migrated_dsn), log)
    try:
        _wait(lambda: 0 < _checkpoint(migrated_dsn) < head - 500)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=15)
    finally:
        if first.poll() is None:
            first.kill()
    killed_at = _checkpoint(migrated_dsn)
    assert 0 < killed_at < head

    second = spawn_server(command, _env(migrated_dsn), log)
    try:
        _wait(lambda: _checkpoint(migrated_dsn) == head)
        # The listening connection drops: the poll fallback still picks up new commits.
        with psycopg.connect(migrated_dsn, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name LIKE 'catalog-es projector catalog_statistics listen%%'"
            )

        async def more() -> int:
            async with open_catalog(bootstrap=False) as catalog:
                warehouse = _scalar(migrated_dsn, "SELECT count(*) FROM warehouses")
                assert warehouse == 1
                with psycopg.connect(migrated_dsn) as conn:
                    row = conn.execute("SELECT id FROM warehouses").fetchone()
                return await _create_namespaces(catalog.store, row[0], 3, 10)

        created += asyncio.run(more())
        _wait(lambda: _checkpoint(migrated_dsn) == _head(migrated_dsn), timeout=10)
    finally:
        _stop(second)

    assert _scalar(migrated_dsn, "SELECT namespaces FROM catalog_statistics") == created
    results = asyncio.run(_verify(migrated_dsn))
    assert all(r.identical for r in results), results


def test_no_commit_is_lost_and_verify_passes_when_rebuilding_while_a_writer_commits(open_catalog, migrated_dsn):
    async def scenario() -> tuple[int, list[int]]:
        async with open_catalog() as catalog:
            await _create_namespaces(catalog.store, catalog.warehouse_id, 20, 100)
            stop, committed = asyncio.Event(), [0]

            async def writer() -> None:
                while not stop.is_set():
                    committed[0] += await _create_namespaces(catalog.store, catalog.warehouse_id, 1, 5)

            runner = asyncio.create_task(ProjectorRunner(migrated_dsn, STATISTICS, poll_seconds=0.1).run())
            writing = asyncio.create_task(writer())
            positions = []
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
                for projection in (CATALOG, STATISTICS, SEARCH, CATALOG):
                    positions.append(await rebuild_projection(conn, projection, batch=200))
            await asyncio.sleep(0.2)
            stop.set()
            await writing
            while _checkpoint(migrated_dsn) < _head(migrated_dsn):  # noqa: ASYNC110 - polls the database
                await asyncio.sleep(0.05)
            runner.cancel()
            return committed[0], positions

    committed, positions = asyncio.run(scenario())
    assert committed > 0
    assert positions == sorted(positions)
    assert _scalar(migrated_dsn, "SELECT count(*) FROM namespaces") == 2000 + committed
    assert _scalar(migrated_dsn, "SELECT namespaces FROM catalog_statistics") == 2000 + committed
    assert _scalar(migrated_dsn, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rebuild_%%'") == 0
    results = asyncio.run(_verify(migrated_dsn))
    assert all(r.identical for r in results), results


def test_statistics_count_live_entities_and_commits_when_projected(open_catalog, migrated_dsn):
    async def scenario() -> None:
        async with open_catalog() as catalog:
            await _create_namespaces(catalog.store, catalog.warehouse_id, 1, 3)
            runner = ProjectorRunner(migrated_dsn, STATISTICS)
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
                while await runner.step(conn):
                    pass

    asyncio.run(scenario())
    with psycopg.connect(migrated_dsn) as conn:
        row = conn.execute("SELECT namespaces, tables, views, commits, events, last_position FROM catalog_statistics")
        assert row.fetchone() == (3, 0, 0, 0, 4, _head(migrated_dsn))  # warehouse created + 3 namespaces
    assert TableCommitted.type_name.endswith(".v2")


def test_cli_verify_exits_1_and_prints_rows_when_a_read_model_was_tampered_with(open_catalog, migrated_dsn):
    async def seed() -> None:
        async with open_catalog() as catalog:
            await _create_namespaces(catalog.store, catalog.warehouse_id, 2, 5)

    asyncio.run(seed())
    rebuilt = _cli(migrated_dsn, "projections", "rebuild", "--all")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "catalog_statistics: rebuilt through position 12" in rebuilt.stdout

    status = _cli(migrated_dsn, "projector", "status", "--json")
    assert status.returncode == 0, status.stderr
    by_name = {s["projector"]: s for s in json.loads(status.stdout)}
    assert by_name["catalog_statistics"] | {"lag_seconds": 0} == {
        "projector": "catalog_statistics",
        "mode": "process",
        "checkpoint": 12,
        "head": 12,
        "lag_positions": 0,
        "lag_seconds": 0,
    }
    assert by_name["catalog"]["mode"] == "inline"

    assert _cli(migrated_dsn, "audit", "verify").returncode == 0
    with psycopg.connect(migrated_dsn) as conn:
        conn.execute("UPDATE catalog_statistics SET namespaces = 99")
        conn.execute("DELETE FROM namespaces WHERE id = (SELECT id FROM namespaces ORDER BY id LIMIT 1)")
    verified = _cli(migrated_dsn, "audit", "verify")
    assert verified.returncode == 1
    assert "catalog (through position 12): DIFFERENT" in verified.stdout
    assert "namespaces replay only:" in verified.stdout
    assert "catalog_statistics live only:" in verified.stdout
    assert "catalog_statistics replay only:" in verified.stdout


def test_health_and_metrics_report_projector_lag_when_the_projector_is_behind(open_catalog, migrated_dsn):
    async def seed() -> None:
        async with open_catalog() as catalog:
            await _create_namespaces(catalog.store, catalog.warehouse_id, 1, 3)

    asyncio.run(seed())
    with TestClient(create_app(load_settings({"CATALOG_ES__PG_DSN": migrated_dsn}), migrated_dsn)) as client:
        health = client.get("/health")
        metrics = client.get("/metrics").text.splitlines()
    assert health.status_code == 200
    by_name = {p["projector"]: p for p in health.json()["projectors"]}
    assert by_name["catalog"]["lag_positions"] == 0
    assert by_name["catalog_statistics"]["checkpoint"] == 0
    assert by_name["catalog_statistics"]["lag_positions"] == 5
    assert 'catalog_es_projector_lag_positions{projector="catalog_statistics"} 5' in metrics


def test_statistics_and_search_match_the_live_catalog_when_every_event_type_was_projected(open_catalog, migrated_dsn):
    async def scenario() -> None:
        async with open_catalog() as catalog:
            await _build_catalog(catalog)
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
                for projection in (STATISTICS, SEARCH):
                    runner = ProjectorRunner(migrated_dsn, projection, batch_size=7)
                    while await runner.step(conn):
                        pass

    asyncio.run(scenario())
    with psycopg.connect(migrated_dsn) as conn:
        live = conn.execute(
            "SELECT (SELECT count(*) FROM namespaces), (SELECT count(*) FROM tables), (SELECT count(*) FROM views),"
            " (SELECT count(*) FROM catalog_events WHERE type LIKE '%%.committed.v_')"
        ).fetchone()
        stats = conn.execute("SELECT namespaces, tables, views, commits FROM catalog_statistics").fetchone()
        search = conn.execute("SELECT kind, namespace, name FROM tabular_search ORDER BY name").fetchall()
        tables = conn.execute("SELECT name FROM tables ORDER BY name").fetchall()
    assert stats == live
    assert [row[2] for row in search] == [row[0] for row in tables]
    assert ("table", ["Sales"], "orders_eu") in search
    assert ("table", ["Sales", "EU"], "legacy_again") in search
    results = asyncio.run(_verify(migrated_dsn))
    assert [r.projection for r in results] == [
        "catalog",
        "catalog_statistics",
        "tabular_search",
        "permissions",
        "tasks",
        "maintenance_policies",
        "maintenance_health",
        "protection",
        "log_chain",
    ]
    assert all(r.identical for r in results), results


def test_projector_tracking_refuses_to_move_back_and_keeps_the_view_when_position_is_not_past(migrated_dsn):
    async def scenario() -> tuple[str, int, int]:
        async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
            async with conn.transaction():
                await lock_checkpoint(conn, "tracking_probe")
                await insert_tracking(conn, Tracking("tracking_probe", 5))
            refused = ""
            try:
                async with conn.transaction():
                    await lock_checkpoint(conn, "tracking_probe")
                    await conn.execute("CREATE TABLE tracking_probe_view (id int)")
                    await insert_tracking(conn, Tracking("tracking_probe", 3))
            except IntegrityError as exc:
                refused = str(exc)
            cursor = await conn.execute("SELECT count(*) FROM pg_tables WHERE tablename = 'tracking_probe_view'")
            views = (await cursor.fetchone() or (0,))[0]
            return refused, await load_checkpoint(conn, "tracking_probe"), views

    refused, position, views = asyncio.run(scenario())
    assert "not past" in refused
    assert position == 5  # forward only, as eventsourcing's TrackingRecorder
    assert views == 0  # the view's write rolled back with the refused tracking
