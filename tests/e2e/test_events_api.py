"""The Iceberg REST Events endpoint end to end: a real server, PostgreSQL and nats-server; pages compared with
the log itself and with what the relay delivered on JetStream."""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.e2e.rest_helpers import SCHEMA, assert_error, ns
from tests.integration.nats_server import NatsServer, eventually, read_stream, stream_count

pytestmark = pytest.mark.e2e

Json = dict[str, Any]
TABLES = 25
TRANSACTIONS = 400  # x TABLES update-table events: 10,000


@pytest.fixture
def nats(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path / "nats-server")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def relayed(pg_dsn: str, tmp_path: Path, nats: NatsServer) -> Iterator[RunningCatalog]:
    """A server whose relay publishes every event to the test's nats-server."""
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__NATS__URL": nats.url}
    running = start_catalog(tmp_path / "data", env)
    yield running
    stop_catalog(running)


def _client(catalog: RunningCatalog) -> tuple[httpx.Client, str]:
    http = httpx.Client(base_url=f"{catalog.catalog_uri}/v1/", timeout=60)
    prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
    return http, prefix


def _ok(response: httpx.Response, status: int = 200) -> Json:
    assert response.status_code == status, response.text
    return response.json() if response.content else {}


def _all_pages(http: httpx.Client, prefix: str, body: Json) -> tuple[list[Json], int]:
    """Every matching event, following continuation tokens until a page comes back empty."""
    events: list[Json] = []
    token, requests = None, 0
    while True:
        page = _ok(http.post(f"{prefix}/events", json={**body, **({"continuation-token": token} if token else {})}))
        requests += 1
        assert page["continuation-token"], page
        token = page["continuation-token"]
        if not page["events"]:
            return events, requests
        events += page["events"]


def _log(dsn: str, warehouse_id: str) -> list[tuple[str, str, Json, Json, int]]:
    """The warehouse's events straight from the log: (id, type, data, extensions, events of its commit)."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT id::text, type, data, extensions,"
            " (SELECT count(*) FROM catalog_events c WHERE c.commit_id = e.commit_id) FROM catalog_events e"
            " WHERE data->>'warehouse_id' = %s ORDER BY global_position",
            (warehouse_id,),
        ).fetchall()
    return [tuple(row) for row in rows]  # type: ignore[misc]


async def _published(url: str, count: int) -> bool:
    return await stream_count(url, "CATALOG_EVENTS") >= count


def _seed(http: httpx.Client, prefix: str) -> dict[str, str]:
    """sales, sales.eu and hr; TABLES tables spread over them; a view; one rename; one drop; then TRANSACTIONS
    multi-table commits (one request: TABLES update-table events). Returns table name -> uuid."""
    for namespace in (["sales"], ["sales", "eu"], ["hr"]):
        _ok(http.post(f"{prefix}/namespaces", json={"namespace": namespace}))
    homes = {f"t{i:02}": ("hr" if i < 5 else "sales\x1feu" if i < 10 else "sales") for i in range(TABLES)}
    uuids = {}
    for name, home in homes.items():
        created = _ok(
            http.post(f"{prefix}/namespaces/{ns(*home.split(chr(31)))}/tables", json={"name": name, "schema": SCHEMA})
        )
        uuids[name] = created["metadata"]["table-uuid"]
    _ok(
        http.post(
            f"{prefix}/namespaces/{ns('sales')}/properties", json={"updates": {"owner": "ops"}, "removals": ["nope"]}
        )
    )
    rename = {"source": {"namespace": ["sales"], "name": "t24"}, "destination": {"namespace": ["hr"], "name": "moved"}}
    _ok(http.post(f"{prefix}/tables/rename", json=rename), 204)
    homes["moved"] = homes.pop("t24")
    homes["moved"] = "hr"
    uuids["moved"] = uuids.pop("t24")
    for i in range(TRANSACTIONS):
        changes = [
            {
                "identifier": {"namespace": home.split("\x1f"), "name": name},
                "requirements": [{"type": "assert-table-uuid", "uuid": uuids[name]}],
                "updates": [{"action": "set-properties", "updates": {"round": str(i)}}],
            }
            for name, home in homes.items()
        ]
        _ok(http.post(f"{prefix}/transactions/commit", json={"table-changes": changes}), 204)
    return uuids


def test_pages_of_the_events_endpoint_are_the_log_and_what_nats_delivered(relayed: RunningCatalog, nats: NatsServer):
    http, prefix = _client(relayed)
    config = _ok(http.get("config", params={"warehouse": "demo"}))
    assert "POST /v1/{prefix}/events" in config["endpoints"]
    started = time.time()
    uuids = _seed(http, prefix)
    log = _log(relayed.env["CATALOG_ES__PG_DSN"], prefix)
    assert len(log) > TABLES * TRANSACTIONS

    # Everything, 1000 a page: the log's events of the warehouse, same ids, same order, nothing twice.
    events, requests = _all_pages(http, prefix, {"page-size": 1000})
    assert [e["event-id"] for e in events] == [row[0] for row in log]
    assert requests == len(log) // 1000 + 2
    by_id = {row[0]: row for row in log}
    for event in events:
        _, event_type, data, extensions, commit_size = by_id[event["event-id"]]
        operation = event["operation"]
        if event_type == "io.catalog-es.table.committed.v2":
            assert operation["operation-type"] == "update-table"
            assert (operation["updates"], operation["requirements"]) == (data["updates"], data["requirements"])
            assert operation["table-uuid"] == data["table_id"]
            assert event["request-id"] == extensions["requestid"]
            assert event["request-event-count"] == TABLES  # one multi-table transaction per request
        assert event["request-event-count"] == commit_size
        assert event["actor"] == {"type": "system" if event is events[0] else "anonymous"}  # bootstrap: system
    ops = [e["operation"]["operation-type"] for e in events]
    assert ops[:1] == ["custom"]  # the warehouse's creation
    assert events[0]["operation"]["custom-type"] == "x-catalog-es-warehouse.created"
    assert ops.count("create-namespace") == 3
    assert ops.count("create-table") == TABLES
    assert ops.count("update-table") == TABLES * TRANSACTIONS
    update = next(e["operation"] for e in events if e["operation"]["operation-type"] == "update-namespace-properties")
    assert update == {
        "operation-type": "update-namespace-properties",
        "namespace": ["sales"],
        "updated": ["owner"],
        "removed": [],
        "missing": [],
    }
    renamed = next(e["operation"] for e in events if e["operation"]["operation-type"] == "rename-table")
    assert renamed == {
        "operation-type": "rename-table",
        "table-uuid": uuids["moved"],
        "source": {"namespace": ["sales"], "name": "t24"},
        "destination": {"namespace": ["hr"], "name": "moved"},
    }

    # What the relay published: the same ids (Nats-Msg-Id) in the same order.
    with psycopg.connect(relayed.env["CATALOG_ES__PG_DSN"]) as conn:
        everything = conn.execute("SELECT count(*) FROM catalog_events").fetchone()[0]
    asyncio.run(eventually(lambda: _published(nats.url, everything), within=120, what="the relay to catch up"))
    messages = [
        m for m in asyncio.run(read_stream(nats.url, "CATALOG_EVENTS")) if m.subject.startswith(f"catalog.{prefix}.")
    ]
    assert [m.headers["Nats-Msg-Id"] for m in messages] == [e["event-id"] for e in events]

    # Filters, small pages: hr's commits (namespaces match recursively, names as they were then).
    hr_updates, _ = _all_pages(
        http, prefix, {"page-size": 333, "operation-types": ["update-table"], "catalog-objects-by-name": [["hr"]]}
    )
    hr_tables = {uuids[f"t{i:02}"] for i in range(5)} | {uuids["moved"]}
    expected = [
        e["event-id"]
        for e in events
        if e["operation"].get("table-uuid") in hr_tables and e["operation"]["operation-type"] == "update-table"
    ]
    assert [e["event-id"] for e in hr_updates] == expected
    assert len(expected) == 6 * TRANSACTIONS

    # sales.eu only (recursive from `sales`, exact from `sales.eu`), by name and by id, both field generations.
    eu = {uuids[f"t{i:02}"] for i in range(5, 10)}
    eu_events, _ = _all_pages(http, prefix, {"page-size": 1000, "catalog-objects-by-name": [["sales", "eu"]]})
    assert {e["operation"].get("table-uuid") for e in eu_events} == eu | {None}  # None: the namespace itself
    by_uuid, _ = _all_pages(http, prefix, {"page-size": 1000, "catalog-objects-by-uuid": sorted(eu)})
    by_id, _ = _all_pages(
        http, prefix, {"page-size": 1000, "catalog-objects-by-id": [{"uuid": u, "type": "table"} for u in sorted(eu)]}
    )
    assert [e["event-id"] for e in by_uuid] == [e["event-id"] for e in by_id]
    assert [e["event-id"] for e in by_uuid] == [e["event-id"] for e in eu_events if e["operation"].get("table-uuid")]

    # The old name finds the table's events before and at its rename; the new name from the rename on.
    old, _ = _all_pages(http, prefix, {"catalog-objects-by-name": [["sales", "t24"]]})
    assert [e["operation"]["operation-type"] for e in old] == ["create-table", "rename-table"]
    new, _ = _all_pages(http, prefix, {"page-size": 1000, "catalog-objects-by-name": [["hr", "moved"]]})
    assert [e["operation"]["operation-type"] for e in new] == ["rename-table"] + ["update-table"] * TRANSACTIONS

    # Object types, and time: both names of the timestamp filter.
    namespaces, _ = _all_pages(http, prefix, {"object-types": ["namespace"]})
    assert [e["operation"]["operation-type"] for e in namespaces] == [
        "create-namespace",
        "create-namespace",
        "create-namespace",
        "update-namespace-properties",
    ]
    middle = events[len(events) // 2]["timestamp-ms"]
    later = [e["event-id"] for e in events if e["timestamp-ms"] > middle]
    for field in ("after-timestamp-ms", "since-timestamp-ms"):
        found, _ = _all_pages(http, prefix, {"page-size": 1000, field: middle})
        assert [e["event-id"] for e in found] == later
    # Times are the commits' (milliseconds): the seeding's events lie between its start and now.
    assert started * 1000 - 1000 < events[1]["timestamp-ms"] <= events[-1]["timestamp-ms"] <= time.time() * 1000


def test_a_continuation_token_resumes_exactly_after_new_commits(catalog: RunningCatalog):
    http, prefix = _client(catalog)
    first = _ok(http.post(f"{prefix}/events", json={}))
    assert [e["operation"]["custom-type"] for e in first["events"]] == ["x-catalog-es-warehouse.created"]
    empty = _ok(http.post(f"{prefix}/events", json={"continuation-token": first["continuation-token"]}))
    assert empty["events"] == []
    _ok(http.post(f"{prefix}/namespaces", json={"namespace": ["late"]}))
    resumed = _ok(http.post(f"{prefix}/events", json={"continuation-token": empty["continuation-token"]}))
    assert [(e["operation"]["operation-type"], e["operation"]["namespace"]) for e in resumed["events"]] == [
        ("create-namespace", ["late"])
    ]
    assert resumed["events"][0]["operation"]["properties"]["location"].startswith("file://")  # as created


BAD_REQUESTS: list[tuple[Json, str]] = [
    ({"continuation-token": "not a token"}, "continuation-token"),
    ({"continuation-token": base64.urlsafe_b64encode(b"cesv1:-1").decode()}, "continuation-token"),
    ({"continuation-token": base64.urlsafe_b64encode(b"cesv1:999999").decode()}, "past the end"),
    ({"page-size": 0}, "page-size"),
    ({"operation-types": ["create-table", "explode-table"]}, "explode-table"),
    ({"object-types": ["warehouse"]}, "object-types"),
    ({"catalog-objects-by-id": ["not-a-uuid"]}, "catalog-objects-by-id"),
    ({"catalog-objects-by-name": [[]]}, "at least one part"),
    ({"after-timestamp-ms": 1, "since-timestamp-ms": 2}, "give one"),
    ({"after-timestamp-ms": 10**30}, "after-timestamp-ms"),
    ({"custom-filters": {"colour": "red"}}, "custom-filters"),
    ({"page-sise": 10}, "page-sise"),
]


def test_bad_tokens_and_filters_get_the_400_envelope(rest):
    for body, fragment in BAD_REQUESTS:
        message = assert_error(rest.http.post(rest.url("events"), json=body), 400, "BadRequestException")
        assert fragment in message, (body, message)


def test_a_token_below_the_retention_horizon_gets_410(pg_dsn: str, tmp_path: Path):
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, "CATALOG_ES__EVENTS_API__RETAINED_FROM_POSITION": "2"}
    running = start_catalog(tmp_path / "data", env)
    try:
        http, prefix = _client(running)
        old = base64.urlsafe_b64encode(b"cesv1:1").decode().rstrip("=")
        assert_error(http.post(f"{prefix}/events", json={"continuation-token": old}), 410, "GoneException")
        fresh = _ok(http.post(f"{prefix}/events", json={}))  # no token: from the horizon on
        assert fresh["events"] == []  # the warehouse's creation (position 2) lies at the horizon
    finally:
        stop_catalog(running)
