"""The embedded runtime and the CLI: serve on a data dir, events tail beside it, stop, start again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import psutil
from cloudevents.core.formats.json import JSONFormat

from tests.e2e.conftest import run_cli, start_catalog, stop_catalog


def _embedded_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}


def _postgres_processes(data_dir: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if process.info["name"] == "postgres" and str(data_dir / "pg") in cmdline:
            found.append(process)
    return found


def _tail(data_dir: Path, *args: str) -> list[dict[str, object]]:
    result = run_cli(["events", "tail", "--data-dir", str(data_dir), *args], _embedded_env(), timeout=120, check=True)
    return [json.loads(line) for line in result.stdout.splitlines()]


def _prefix(base_url: str) -> str:
    config = httpx.get(f"{base_url}/catalog/v1/config", params={"warehouse": "demo"}).json()
    return str(config["defaults"]["prefix"])


def test_state_survives_restart_and_stop_stops_postgres_when_serving_embedded(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = start_catalog(data_dir, _embedded_env())
    prefix = _prefix(first.base_url)
    created = httpx.post(
        f"{first.base_url}/catalog/v1/{prefix}/namespaces", json={"namespace": ["sales"], "properties": {"k": "v"}}
    )
    assert created.status_code == 200
    assert _postgres_processes(data_dir), "serve should run an embedded PostgreSQL under the data dir"

    assert stop_catalog(first) == 0
    assert not _postgres_processes(data_dir), "stopping serve must stop the PostgreSQL it started"

    second = start_catalog(data_dir, _embedded_env())
    try:
        assert _prefix(second.base_url) == prefix
        loaded = httpx.get(f"{second.base_url}/catalog/v1/{prefix}/namespaces/sales")
        assert loaded.status_code == 200
        assert loaded.json()["properties"]["k"] == "v"
    finally:
        stop_catalog(second)


def test_events_tail_prints_cloudevents_while_serve_runs_when_pointed_at_its_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    running = start_catalog(data_dir, _embedded_env())
    try:
        prefix = _prefix(running.base_url)
        for name in ("a", "b"):
            response = httpx.post(f"{running.base_url}/catalog/v1/{prefix}/namespaces", json={"namespace": [name]})
            assert response.status_code == 200

        events = _tail(data_dir)
        newest = _tail(data_dir, "--limit", "2")
    finally:
        stop_catalog(running)

    positions = [event["position"] for event in events]
    assert positions == list(range(1, len(events) + 1)), "positions are gap-free from 1"
    types = [event["type"] for event in events]
    assert types[:2] == ["io.catalog-es.project.created.v1", "io.catalog-es.warehouse.created.v1"]
    assert types[-2:] == ["io.catalog-es.namespace.created.v1"] * 2
    assert newest == events[-2:]
    assert [event["data"]["namespace"] for event in newest] == [["a"], ["b"]]
    assert all(event["actor"] == "anonymous" for event in newest)
    for event in events:
        assert {"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"} <= event.keys()
        parsed = JSONFormat().read(None, json.dumps(event).encode())
        assert parsed.get_extension("position") == event["position"]
        assert parsed.get_id() == event["id"]


def test_migrate_is_idempotent_when_run_twice_against_an_external_database(pg_dsn: str) -> None:
    env = {**_embedded_env(), "CATALOG_ES__PG_DSN": pg_dsn}
    first = run_cli(["migrate"], env, timeout=120, check=True)
    second = run_cli(["migrate"], env, timeout=120, check=True)
    assert "0001_event_store" in first.stdout
    assert second.stdout.strip() == "schema is up to date"
