"""Recursive soft drop and undrop of a namespace under builtin authorization: grants come back with the tree."""

from __future__ import annotations

import uuid

import httpx
import pytest
from pyiceberg.exceptions import NoSuchTableError

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import ROWS, SCHEMA, _granted, _id, _management, _pyiceberg, _table_id
from tests.e2e.conftest import RunningCatalog
from tests.e2e.rest_helpers import SCHEMA as REST_SCHEMA
from tests.e2e.test_views import view_version

pytestmark = pytest.mark.e2e


def _known(catalog: RunningCatalog, idp: OpenIdProvider, *clients: str) -> None:
    """Their first /config call records the users (the warehouse does not exist for them yet)."""
    for client in clients:
        headers = {"Authorization": f"Bearer {idp.token(client)}"}
        config = httpx.get(f"{catalog.catalog_uri}/v1/config", params={"warehouse": "demo"}, headers=headers)
        assert config.status_code == 404, config.text


def test_recursive_undrop_restores_tables_and_views_with_their_grants(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
):
    seeded = authz_catalog
    _known(seeded, idp, "alice", "bob")
    admin, catalog_admin = _management(seeded, idp, "admin"), _pyiceberg(seeded, idp, "admin")
    catalog_admin.create_namespace("sales")
    catalog_admin.create_table("sales.orders", schema=SCHEMA)
    warehouse = _id(seeded, "SELECT id FROM warehouses")
    profile = {"delete-profile": {"type": "soft", "expiration-seconds": 3600}}
    assert admin.post(f"/warehouse/{warehouse}/delete-profile", json=profile).status_code == 204
    catalog_admin.create_namespace(("sales", "eu"))
    catalog_admin.create_table("sales.eu.deep", schema=SCHEMA).append(ROWS)
    bearer = {"Authorization": f"Bearer {idp.token('admin')}"}
    rest = httpx.Client(base_url=f"{seeded.catalog_uri}/v1/{warehouse}", headers=bearer, timeout=30)
    view = {"name": "v", "schema": REST_SCHEMA, "view-version": view_version("SELECT 1"), "properties": {}}
    assert rest.post("/namespaces/sales/views", json=view).status_code == 200
    deep, view_id = _table_id(seeded, "deep"), _id(seeded, "SELECT id FROM views WHERE name = 'v'")
    _granted(admin, f"warehouse/{warehouse}/table/{deep}", writes=[{"type": "select", "user": "oidc~alice"}])
    _granted(admin, f"warehouse/{warehouse}/view/{view_id}", writes=[{"type": "describe", "user": "oidc~bob"}])
    alice = _pyiceberg(seeded, idp, "alice")
    assert alice.load_table("sales.eu.deep").scan().to_arrow().num_rows == 3
    sales = _id(seeded, "SELECT id FROM namespaces WHERE parts = %s", ["sales"])

    dropped = rest.delete("/namespaces/sales", params={"recursive": "true"})

    assert dropped.status_code == 204, dropped.text
    with pytest.raises(NoSuchTableError):
        alice.load_table("sales.eu.deep")
    alice_http = _management(seeded, idp, "alice")
    listed = alice_http.get(f"/warehouse/{warehouse}/deleted-tabulars").json()["tabulars"]
    assert [row["name"] for row in listed] == ["deep"]  # only what her surviving grant lets her describe
    everything = admin.get(f"/warehouse/{warehouse}/deleted-tabulars").json()["tabulars"]
    assert sorted(row["name"] for row in everything) == ["deep", "orders", "v"]
    refused = alice_http.post(
        f"/warehouse/{warehouse}/deleted-tabulars/undrop", json={"targets": [{"type": "namespace", "id": sales}]}
    )
    assert refused.status_code in (403, 404), refused.text  # she may not modify the namespace
    unknown = admin.post(
        f"/warehouse/{warehouse}/deleted-tabulars/undrop",
        json={"targets": [{"type": "table", "id": str(uuid.uuid4())}]},
    )
    assert unknown.status_code == 404, unknown.text

    undropped = admin.post(
        f"/warehouse/{warehouse}/deleted-tabulars/undrop", json={"targets": [{"type": "namespace", "id": sales}]}
    )

    assert undropped.status_code == 200, undropped.text
    assert alice.load_table("sales.eu.deep").scan().to_arrow().num_rows == 3  # her grant is back with the table
    bob = httpx.Client(
        base_url=f"{seeded.catalog_uri}/v1/{warehouse}",
        headers={"Authorization": f"Bearer {idp.token('bob')}"},
        timeout=30,
    )
    assert bob.get("/namespaces/sales/views/v").status_code == 200
    assert admin.get(f"/warehouse/{warehouse}/deleted-tabulars").json()["tabulars"] == []
    rest.close()
    bob.close()
