"""Embedded mode end to end: `serve` runs nats-server and the relay; commits arrive on JetStream."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import httpx

from api.runtime.embedded_nats import running_embedded_nats
from tests.e2e.conftest import run_cli, start_catalog, stop_catalog
from tests.integration.nats_server import read_stream


def _embedded_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/status").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def _metric(base_url: str, name: str) -> float:
    for line in httpx.get(f"{base_url}/metrics").text.splitlines():
        if line.startswith(f"catalog_es_{name}{{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no metric {name}")


def test_serve_publishes_each_commit_to_its_embedded_nats_when_run_without_configuration(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    running = start_catalog(data_dir, _embedded_env())
    try:
        url = running_embedded_nats(data_dir)
        assert url is not None
        assert url.startswith("nats://127.0.0.1:")
        nats_pid = json.loads((data_dir / "nats" / "server.json").read_text())["pid"]
        config = httpx.get(f"{running.base_url}/catalog/v1/config", params={"warehouse": "demo"}).json()
        prefix = config["defaults"]["prefix"]
        created = httpx.post(f"{running.base_url}/catalog/v1/{prefix}/namespaces", json={"namespace": ["sales"]})
        assert created.status_code == 200

        subscribe = ["events", "subscribe", "--data-dir", str(data_dir), "--from-start", "--count", "3"]
        subscribed = run_cli(subscribe, _embedded_env(), timeout=120, check=True)
        deadline = time.monotonic() + 30
        while _metric(running.base_url, "relay_published_total") < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _metric(running.base_url, "relay_leader") == 1
        assert _metric(running.base_url, "relay_lag_positions") == 0
        messages = asyncio.run(read_stream(url, "CATALOG_EVENTS"))
    finally:
        assert stop_catalog(running) == 0

    events = [json.loads(line) for line in subscribed.stdout.splitlines()]
    assert [event["type"] for event in events] == [
        "io.catalog-es.project.created.v1",
        "io.catalog-es.warehouse.created.v1",
        "io.catalog-es.namespace.created.v1",
    ]
    assert [event["position"] for event in events] == [1, 2, 3]
    assert events[2]["data"]["namespace"] == ["sales"]
    assert events[2]["actor"] == "anonymous"
    namespace_id, warehouse_id = events[2]["data"]["namespace_id"], events[2]["data"]["warehouse_id"]
    assert messages[2].subject == f"catalog.{warehouse_id}.namespace.created.{namespace_id}"
    assert messages[2].headers["ce-source"] == "/catalog-es"
    assert messages[0].subject.startswith("catalog._.project.created.")
    assert not _alive(nats_pid), "stopping serve must stop the nats-server it started"
