"""The past is not filtered per object: an as-of prefix needs describe on the whole warehouse."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import SCHEMA, _granted, _id, _management, _pyiceberg, _table_id
from tests.e2e.conftest import RunningCatalog
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e


def test_an_as_of_prefix_needs_describe_on_the_warehouse(authz_catalog: RunningCatalog, idp: OpenIdProvider):
    admin = _pyiceberg(authz_catalog, idp, "admin")
    admin.create_namespace("sales")
    admin.create_table("sales.orders", schema=SCHEMA)
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    position = _id(authz_catalog, "SELECT position FROM catalog_event_counter")
    config = f"{authz_catalog.catalog_uri}/v1/config"
    namespaces = f"{authz_catalog.catalog_uri}/v1/{warehouse}@{position}/namespaces"

    def get(client: str, url: str, **params: str) -> httpx.Response:
        return httpx.get(url, params=params, headers={"Authorization": f"Bearer {idp.token(client)}"}, timeout=30)

    assert get("admin", namespaces).json()["namespaces"] == [["sales"]]
    assert_error(get("alice", config, warehouse=f"demo@{position}"), 404, "NoSuchWarehouseException")
    management = _management(authz_catalog, idp, "admin")
    table = _table_id(authz_catalog, "orders")
    _granted(management, f"warehouse/{warehouse}/table/{table}", writes=[{"type": "select", "user": "oidc~alice"}])
    assert get("alice", config, warehouse="demo").status_code == 200  # the present: filtered to her table
    assert_error(get("alice", config, warehouse=f"demo@{position}"), 403, "ForbiddenException")
    assert_error(get("alice", namespaces), 403, "ForbiddenException")
    _granted(management, f"warehouse/{warehouse}", writes=[{"type": "describe", "user": "oidc~alice"}])
    prefix = get("alice", config, warehouse=f"demo@{position}").json()["defaults"]["prefix"]
    assert prefix == f"{warehouse}@{position}"
    assert get("alice", namespaces).json()["namespaces"] == [["sales"]]
