"""Lakekeeper's `search-tabular`, warehouse `statistics` (over their process projections) and `endpoint-statistics`
routes, filtered by what the caller may see."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import SCHEMA, _granted, _id, _management, _pyiceberg, _table_id
from tests.e2e.conftest import RunningCatalog, spawn_server
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e


@contextmanager
def _projectors(catalog: RunningCatalog) -> Iterator[None]:
    """With an external database `serve` runs no projectors: run the process ones as deployed."""
    args = ["projector", "run", "--all", "--poll-seconds", "0.1"]
    process = spawn_server(args, {**os.environ, **catalog.env}, Path(os.devnull))
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _caught_up(catalog: RunningCatalog) -> None:
    """Wait (bounded, by polling on real round trips) until both process projections reach the log's head."""
    query = (
        "SELECT (SELECT position FROM catalog_event_counter) <= coalesce((SELECT min(position)"
        " FROM projector_checkpoints WHERE name IN ('tabular_search', 'catalog_statistics')"
        " HAVING count(*) = 2), -1)"
    )
    for _ in range(600):
        if _id(catalog, query) == "True":
            return
        httpx.get(f"{catalog.base_url}/health", timeout=30)
    pytest.fail("the process projections did not catch up")


def _hits(response: httpx.Response) -> list[tuple[str, list[str], str]]:
    assert response.status_code == 200, response.text
    return [
        (hit["tabular-id"]["type"], hit["namespace-name"], hit["tabular-name"]) for hit in response.json()["tabulars"]
    ]


def _routes(response: httpx.Response) -> dict[tuple[str, int, str | None], int]:
    """(route, status, warehouse name) -> calls, summed over the hours of the window."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["timestamps"]) == len(body["called-endpoints"])
    counts: dict[tuple[str, int, str | None], int] = {}
    for hour in body["called-endpoints"]:
        for entry in hour:
            key = (entry["http-route"], entry["status-code"], entry["warehouse-name"])
            counts[key] = counts.get(key, 0) + entry["count"]
    return counts


def test_search_statistics_and_endpoint_statistics_show_only_what_the_caller_may_see(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
):
    admin = _pyiceberg(authz_catalog, idp, "admin")
    admin.create_namespace("sales")
    admin.create_table("sales.orders", schema=SCHEMA)
    admin.create_table("sales.orders_archive", schema=SCHEMA)
    admin.create_table("sales.customer_orders", schema=SCHEMA)
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    with _projectors(authz_catalog):
        _caught_up(authz_catalog)
    management = _management(authz_catalog, idp, "admin")
    search = f"/warehouse/{warehouse}/search-tabular"

    found = management.post(search, json={"search": "ORDERS"})
    assert _hits(found) == [
        ("table", ["sales"], "orders"),
        ("table", ["sales"], "orders_archive"),
        ("table", ["sales"], "customer_orders"),
    ]
    distances = [hit["distance"] for hit in found.json()["tabulars"]]
    assert distances[0] == 0.0
    assert distances == sorted(distances)
    archive = _table_id(authz_catalog, "orders_archive")
    by_id = management.post(search, json={"search": archive}).json()["tabulars"]
    assert [(hit["tabular-name"], hit["tabular-id"]["id"], hit["distance"]) for hit in by_id] == [
        ("orders_archive", archive, 0.0)
    ]
    long_search = "orders" + "x" * 100  # cut to 64 characters, as Lakekeeper does: no match, no error
    assert _hits(management.post(search, json={"search": long_search})) == []
    assert_error(management.post(search, json={"search": "  "}), 400, "BadRequestException")
    assert_error(management.post(search, json={"query": "orders"}), 400, "BadRequestException")

    stats = management.get(f"/warehouse/{warehouse}/statistics")
    assert stats.status_code == 200, stats.text
    body = stats.json()
    assert body["warehouse-ident"] == warehouse
    assert body["next-page-token"] is None
    newest = body["stats"][0]
    assert (newest["number-of-tables"], newest["number-of-views"]) == (3, 0)
    assert newest["updated-at"] < newest["timestamp"]  # the end of the hour of the last change
    one = management.get(f"/warehouse/{warehouse}/statistics", params={"page_size": 1})
    assert one.json()["stats"] == [newest]
    assert_error(
        management.get(f"/warehouse/{warehouse}/statistics", params={"page_token": "@@"}), 400, "BadRequestException"
    )

    for client in ("alice", "bob"):  # their first /config call provisions them
        httpx.get(
            f"{authz_catalog.catalog_uri}/v1/config",
            params={"warehouse": "demo"},
            headers={"Authorization": f"Bearer {idp.token(client)}"},
            timeout=30,
        )
    alice, bob = _management(authz_catalog, idp, "alice"), _management(authz_catalog, idp, "bob")
    assert_error(bob.post(search, json={"search": "orders"}), 404, "NoSuchWarehouseException")  # hidden = missing
    assert_error(bob.get(f"/warehouse/{warehouse}/statistics"), 404, "NoSuchWarehouseException")
    _granted(management, f"warehouse/{warehouse}/table/{archive}", writes=[{"type": "select", "user": "oidc~alice"}])
    assert _hits(alice.post(search, json={"search": "orders"})) == [("table", ["sales"], "orders_archive")]
    # Counts cover the whole warehouse, hidden tables too: they need describe on all of it.
    assert_error(alice.get(f"/warehouse/{warehouse}/statistics"), 403, "ForbiddenException")

    # Endpoint statistics: every call of the two APIs, by route, status and warehouse.
    statistics = "/endpoint-statistics"
    mine = _routes(management.post(statistics, json={"warehouse": {"type": "warehouse-id", "id": warehouse}}))
    creates = "POST /catalog/v1/{prefix}/namespaces/{namespace}/tables"
    assert mine[(creates, 200, "demo")] == 3
    assert mine[("POST /management/v1/warehouse/{warehouse_id}/search-tabular", 200, "demo")] >= 4
    assert mine[("POST /management/v1/warehouse/{warehouse_id}/search-tabular", 404, "demo")] == 1  # bob's
    assert all(name == "demo" for _, _, name in mine)
    unmapped = _routes(management.post(statistics, json={"warehouse": {"type": "unmapped"}}))
    assert unmapped[("POST /management/v1/bootstrap", 204, None)] == 1
    assert all(name is None for _, _, name in unmapped)
    only_404 = _routes(management.post(statistics, json={"warehouse": {"type": "all"}, "status-codes": [404]}))
    assert only_404
    assert {status for _, status, _ in only_404} == {404}
    window = {"type": "window", "end": "2000-01-01T00:00:00Z", "interval": "PT2H"}
    past = management.post(statistics, json={"warehouse": {"type": "all"}, "range-specifier": window})
    assert _routes(past) == {}
    later = {"type": "page-token", "token": past.json()["next-page-token"]}
    assert _routes(management.post(statistics, json={"warehouse": {"type": "all"}, "range-specifier": later})) == {}
    for bad in (
        {"type": "window", "end": "2000-01-01T00:00:00Z", "interval": "P1M"},
        {"type": "page-token", "token": "@"},
    ):
        response = management.post(statistics, json={"warehouse": {"type": "all"}, "range-specifier": bad})
        assert_error(response, 400, "BadRequestException")
    assert_error(management.post(statistics, json={"warehouse": {"type": "every"}}), 400, "BadRequestException")

    # alice sees one table but cannot describe the warehouse nor the project: none of their calls.
    assert _routes(alice.post(statistics, json={"warehouse": {"type": "all"}})) == {}
    target = {"warehouse": {"type": "warehouse-id", "id": warehouse}}
    assert_error(alice.post(statistics, json=target), 403, "ForbiddenException")
    assert_error(bob.post(statistics, json=target), 404, "NoSuchProjectException")  # he sees nothing of it
    assert_error(alice.post(statistics, json={"warehouse": {"type": "unmapped"}}), 403, "ForbiddenException")
