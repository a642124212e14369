"""Warehouse search over the `tabular_search` projection: names, kinds, ids, filtered by what the caller sees."""

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
def _search_projector(catalog: RunningCatalog) -> Iterator[None]:
    """With an external database `serve` runs no projectors: run the search one as its own process, as deployed."""
    args = ["projector", "run", "tabular_search", "--poll-seconds", "0.1"]
    process = spawn_server(args, {**os.environ, **catalog.env}, Path(os.devnull))
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _caught_up(catalog: RunningCatalog) -> None:
    """The search index is a process projection: wait (bounded, by polling) for its checkpoint to reach the log."""
    for _ in range(600):
        position = _id(catalog, "SELECT position FROM catalog_event_counter")
        checkpoint = _id(
            catalog, "SELECT coalesce(max(position), -1) FROM projector_checkpoints WHERE name = 'tabular_search'"
        )
        if int(checkpoint) >= int(position):
            return
        httpx.get(f"{catalog.base_url}/health", timeout=30)  # paces the polling on a real round trip
    pytest.fail("the tabular_search projector did not catch up")


def _names(response: httpx.Response) -> list[tuple[str, list[str], str]]:
    assert response.status_code == 200, response.text
    return [(hit["kind"], hit["namespace"], hit["name"]) for hit in response.json()["tabulars"]]


def test_search_finds_tables_by_name_and_only_what_the_caller_may_see(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
):
    admin = _pyiceberg(authz_catalog, idp, "admin")
    admin.create_namespace("sales")
    admin.create_namespace(("sales", "eu"))
    admin.create_table("sales.orders", schema=SCHEMA)
    admin.create_table("sales.eu.Orders_EU", schema=SCHEMA)
    admin.create_table("sales.customers", schema=SCHEMA)
    admin.rename_table("sales.customers", "sales.clients_with_orders")
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    with _search_projector(authz_catalog):
        _caught_up(authz_catalog)
    management = _management(authz_catalog, idp, "admin")
    path = f"/warehouse/{warehouse}/search"

    found = management.get(path, params={"q": "ORDERS"})
    assert _names(found) == [
        ("table", ["sales"], "orders"),
        ("table", ["sales", "eu"], "Orders_EU"),
        ("table", ["sales"], "clients_with_orders"),
    ]
    first = found.json()["tabulars"][0]
    assert first["id"] == _table_id(authz_catalog, "orders")
    assert first["namespace-id"] == _id(authz_catalog, "SELECT id FROM namespaces WHERE parts = %s", ["sales"])
    assert _names(management.get(path, params={"q": "orders", "limit": 1})) == [("table", ["sales"], "orders")]
    assert _names(management.get(path, params={"q": "customers"})) == []  # renamed away

    alice = _management(authz_catalog, idp, "alice")
    assert_error(alice.get(path, params={"q": "orders"}), 404, "NoSuchWarehouseException")  # hidden = missing
    _granted(
        management,
        f"warehouse/{warehouse}/table/{_table_id(authz_catalog, 'Orders_EU')}",
        writes=[{"type": "select", "user": "oidc~alice"}],
    )
    assert _names(alice.get(path, params={"q": "orders"})) == [("table", ["sales", "eu"], "Orders_EU")]

    for params in ({"q": ""}, {"q": "  "}, {}, {"q": "orders", "limit": 0}, {"q": "orders", "limit": 1001}):
        assert_error(management.get(path, params=params), 400, "BadRequestException")
    missing = "00000000-0000-0000-0000-000000000001"
    assert_error(management.get(f"/warehouse/{missing}/search", params={"q": "x"}), 404, "NoSuchWarehouseException")
