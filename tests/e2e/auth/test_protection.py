"""Protection end to end with builtin authorization: a protected table, namespace or warehouse is not dropped
(409) unless someone allowed to force (modify on the warehouse) passes `force=true`; rebuild and verify agree."""

from __future__ import annotations

import httpx
import pytest
from pyiceberg.exceptions import NoSuchTableError

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import SCHEMA, _granted, _id, _management, _namespace_id, _pyiceberg, _table_id
from tests.e2e.conftest import RunningCatalog, run_cli
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e


def _catalog_api(catalog: RunningCatalog, idp: OpenIdProvider, client: str, warehouse: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(client)}"}
    return httpx.Client(base_url=f"{catalog.catalog_uri}/v1/{warehouse}/", headers=headers, timeout=30)


def _set(http: httpx.Client, path: str, protected: bool) -> dict[str, object]:
    response = http.post(f"{path}/protection", json={"protected": protected})
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    assert set(body) == {"protected", "updated_at"}
    assert body["protected"] is protected
    assert isinstance(body["updated_at"], str)
    return body


def test_protected_objects_are_dropped_only_when_forced_by_a_warehouse_modifier(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
):
    admin = _pyiceberg(authz_catalog, idp, "admin")
    admin.create_namespace("sales")
    admin.create_table("sales.orders", schema=SCHEMA)
    admin.create_table("sales.items", schema=SCHEMA)
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    orders, items = _table_id(authz_catalog, "orders"), _table_id(authz_catalog, "items")
    sales = _namespace_id(authz_catalog, "sales")
    management = _management(authz_catalog, idp, "admin")
    for client in ("alice", "bob"):  # their first /config call provisions them
        _catalog_api(authz_catalog, idp, client, warehouse).get("../config", params={"warehouse": "demo"})
    # alice may drop the table (modify on it) but not force: that needs modify on the warehouse.
    _granted(management, f"warehouse/{warehouse}/table/{orders}", writes=[{"type": "modify", "user": "oidc~alice"}])
    # bob sees the warehouse (he may read items) but not orders: for him orders does not exist.
    _granted(management, f"warehouse/{warehouse}/table/{items}", writes=[{"type": "select", "user": "oidc~bob"}])
    alice, bob = _management(authz_catalog, idp, "alice"), _management(authz_catalog, idp, "bob")
    table_path = f"/warehouse/{warehouse}/table/{orders}"

    assert management.get(f"{table_path}/protection").json() == {"protected": False, "updated_at": None}
    _set(management, table_path, True)
    assert management.get(f"{table_path}/protection").json()["protected"] is True
    assert alice.get(f"{table_path}/protection").json()["protected"] is True  # she may describe it
    assert_error(bob.get(f"{table_path}/protection"), 404, "NoSuchTableException")  # hidden = missing
    assert_error(bob.post(f"{table_path}/protection", json={"protected": False}), 404, "NoSuchTableException")
    assert_error(management.post(f"{table_path}/protection", json={"protected": "yes"}), 400, "BadRequestException")
    missing = f"/warehouse/{warehouse}/table/00000000-0000-0000-0000-00000000abcd/protection"
    assert_error(management.get(missing), 404, "NoSuchTableException")
    namespace_as_table = f"/warehouse/{warehouse}/table/{sales}/protection"
    assert_error(management.get(namespace_as_table), 404, "NoSuchTableException")

    rest_alice = _catalog_api(authz_catalog, idp, "alice", warehouse)
    message = assert_error(rest_alice.delete("namespaces/sales/tables/orders"), 409, "ProtectedException")
    assert "Table sales.orders is protected from being dropped" in message
    assert "force=true" in message
    with pytest.raises(Exception, match="is protected from being dropped"):  # pyiceberg's RESTError
        _pyiceberg(authz_catalog, idp, "alice").drop_table("sales.orders")
    assert_error(
        rest_alice.delete("namespaces/sales/tables/orders", params={"force": "true"}), 403, "ForbiddenException"
    )
    rest_bob = _catalog_api(authz_catalog, idp, "bob", warehouse)
    assert_error(
        rest_bob.delete("namespaces/sales/tables/orders", params={"force": "true"}), 404, "NoSuchTableException"
    )
    assert admin.load_table("sales.orders").metadata.table_uuid is not None  # still there

    rest_admin = _catalog_api(authz_catalog, idp, "admin", warehouse)
    assert rest_admin.delete("namespaces/sales/tables/orders", params={"force": "true"}).status_code == 204
    with pytest.raises(NoSuchTableError):
        admin.load_table("sales.orders")

    # A namespace: protected itself, or holding anything protected, it is not dropped.
    namespace_path = f"/warehouse/{warehouse}/namespace/{sales}"
    _set(management, namespace_path, True)
    message = assert_error(rest_admin.delete("namespaces/sales"), 409, "ProtectedException")
    assert "namespace sales is protected" in message
    _set(management, namespace_path, False)
    _set(management, f"/warehouse/{warehouse}/table/{items}", True)
    message = assert_error(rest_admin.delete("namespaces/sales"), 409, "ProtectedException")
    assert "table sales.items is protected" in message

    # The warehouse: shown in its responses; deletion refused unless forced.
    _set(management, f"/warehouse/{warehouse}", True)
    assert management.get(f"/warehouse/{warehouse}").json()["protected"] is True
    listed = management.get("/warehouse").json()["warehouses"]
    assert [w["protected"] for w in listed if w["id"] == warehouse] == [True]
    message = assert_error(management.delete(f"/warehouse/{warehouse}"), 409, "ProtectedException")
    assert "Warehouse 'demo' is protected from being deleted" in message
    assert_error(bob.delete(f"/warehouse/{warehouse}", params={"force": "true"}), 403, "ForbiddenException")

    # Every change is an event with its actor; the read model is what the log rebuilds.
    actors = _id(
        authz_catalog,
        "SELECT string_agg(DISTINCT extensions->>'actor', ',') FROM catalog_events WHERE type LIKE %s",
        "%.protection-set.v1",
    )
    assert actors == "oidc~admin"
    env = authz_catalog.env
    verify = run_cli(["audit", "verify", "protection"], env)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    rebuild = run_cli(["projections", "rebuild", "protection"], env)
    assert rebuild.returncode == 0, rebuild.stdout + rebuild.stderr
    assert management.get(f"/warehouse/{warehouse}").json()["protected"] is True
    assert management.get(f"/warehouse/{warehouse}/table/{items}/protection").json()["protected"] is True

    assert management.delete(f"/warehouse/{warehouse}", params={"force": "true"}).status_code == 204
    assert_error(management.get(f"/warehouse/{warehouse}"), 404, "NoSuchWarehouseException")
