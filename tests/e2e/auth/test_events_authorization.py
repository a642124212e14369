"""Who reads which events: `read_events` on the warehouse opens the endpoint, describe on each object decides
which of its events a caller sees; hidden warehouses answer like missing ones."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import SCHEMA, _granted, _id, _management, _pyiceberg, _table_id
from tests.e2e.conftest import RunningCatalog
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e


def _events(catalog: RunningCatalog, idp: OpenIdProvider, client: str, warehouse: str, body=None) -> httpx.Response:
    return httpx.post(
        f"{catalog.catalog_uri}/v1/{warehouse}/events",
        json=body or {},
        headers={"Authorization": f"Bearer {idp.token(client)}"},
        timeout=30,
    )


def _operations(response: httpx.Response) -> list[tuple[str, object]]:
    assert response.status_code == 200, response.text
    result = []
    for event in response.json()["events"]:
        operation = event["operation"]
        subject = operation.get("identifier") or operation.get("namespace") or operation.get("custom-type")
        result.append((operation["operation-type"], subject))
    return result


def test_a_caller_sees_only_the_events_of_objects_they_may_describe(authz_catalog: RunningCatalog, idp: OpenIdProvider):
    admin = _pyiceberg(authz_catalog, idp, "admin")
    for namespace in ("sales", "hr"):
        admin.create_namespace(namespace)
    orders = admin.create_table("sales.orders", schema=SCHEMA)
    admin.create_table("hr.salaries", schema=SCHEMA)
    with orders.transaction() as tx:
        tx.set_properties(owner="sales-team")
    admin.drop_table("hr.salaries")
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    orders_id = _table_id(authz_catalog, "orders")
    management = _management(authz_catalog, idp, "admin")

    # The admin (server admin) sees everything in the warehouse.
    everything = _operations(_events(authz_catalog, idp, "admin", warehouse))
    assert [kind for kind, _ in everything] == [
        "custom",
        "create-namespace",
        "create-namespace",
        "create-table",
        "create-table",
        "update-table",
        "drop-table",
    ]

    # Without any grant the warehouse does not exist for carol; bob sees it (describe on it) but may not read
    # its events; `read_events` alone opens the endpoint but shows nothing she may not describe.
    for client in ("alice", "bob", "carol"):  # (their first request also makes them known users)
        assert_error(_events(authz_catalog, idp, client, warehouse), 404, "NoSuchWarehouseException")
    _granted(management, f"warehouse/{warehouse}", writes=[{"type": "describe", "user": "oidc~bob"}])
    assert_error(_events(authz_catalog, idp, "bob", warehouse), 403, "ForbiddenException")
    _granted(management, f"warehouse/{warehouse}", writes=[{"type": "read_events", "user": "oidc~alice"}])
    assert _operations(_events(authz_catalog, idp, "alice", warehouse)) == []

    # With select on one table, that table's events, whatever the filter asks for.
    _granted(management, f"warehouse/{warehouse}/table/{orders_id}", writes=[{"type": "select", "user": "oidc~alice"}])
    orders_ident = {"namespace": ["sales"], "name": "orders"}
    assert _operations(_events(authz_catalog, idp, "alice", warehouse)) == [
        ("create-table", orders_ident),
        ("update-table", orders_ident),
    ]
    hr = _events(authz_catalog, idp, "alice", warehouse, {"catalog-objects-by-name": [["hr"]]})
    assert _operations(hr) == []  # hr.salaries (dropped) is not hers: like a missing object

    # Ownership of the warehouse implies read_events, and describe on everything in it.
    _granted(management, f"warehouse/{warehouse}", writes=[{"type": "ownership", "user": "oidc~bob"}])
    assert _operations(_events(authz_catalog, idp, "bob", warehouse)) == everything
