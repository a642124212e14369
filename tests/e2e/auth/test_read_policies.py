"""Read policies (issue 33): a principal under a row filter and a column list reads, through plans, only the
allowed rows and columns; it is refused forbidden columns, and loadTable hands it no direct storage access."""

from __future__ import annotations

from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.types import LongType, NestedField, StringType

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import _granted, _id, _management, _table_id
from tests.e2e.conftest import RunningCatalog

pytestmark = pytest.mark.e2e

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "dept", StringType(), required=False),
    NestedField(3, "name", StringType(), required=False),
    NestedField(4, "salary", LongType(), required=False),
)
ENG_ONLY = {"type": "eq", "term": "dept", "value": "eng"}


def _rows(start: int) -> pa.Table:
    people = [
        {"id": start + i, "dept": ["eng", "ops", "sales"][i % 3], "name": f"p{start + i}", "salary": 1000 * (i + 1)}
        for i in range(9)
    ]
    return pa.Table.from_pylist(people, schema=SCHEMA.as_arrow())


def _catalog(catalog: RunningCatalog, idp: OpenIdProvider, client: str) -> Catalog:
    secret, _ = idp.clients[client]
    auth = {"credential": f"{client}:{secret}", "oauth2-server-uri": idp.token_endpoint}
    return load_catalog(client, type="rest", uri=catalog.catalog_uri, warehouse="demo", **auth)


def _planned_rows(table: Table, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """Read as an engine that honours plans does: each task's file, filtered by that task's residual.

    (pyiceberg 0.12's `to_arrow()` plans on the server but filters every file with the client's own filter only.)
    """
    scan = table.scan(selected_fields=fields)
    parts = [
        ArrowScan(table.metadata, table.io, scan.projection(), task.residual, True).to_table([task])
        for task in scan.plan_files()
    ]
    return sorted((row for part in parts for row in part.to_pylist()), key=lambda row: row["id"])


@pytest.fixture
def people(authz_catalog: RunningCatalog, idp: OpenIdProvider) -> str:
    """hr.people (two appends, unpartitioned); alice and bob may select it; alice is under an eng-only,
    no-salary policy. Returns the table id."""
    admin = _catalog(authz_catalog, idp, "admin")
    admin.create_namespace("hr")
    table = admin.create_table("hr.people", schema=SCHEMA)
    table.append(_rows(0))
    table.append(_rows(100))
    for client in ("alice", "bob"):  # their first authenticated call records them
        httpx.get(
            f"{authz_catalog.catalog_uri}/v1/config",
            params={"warehouse": "demo"},
            headers={"Authorization": f"Bearer {idp.token(client)}"},
        )
    table_id = _table_id(authz_catalog, "people")
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    http = _management(authz_catalog, idp, "admin")
    for user in ("oidc~alice", "oidc~bob"):
        _granted(http, f"warehouse/{warehouse}/table/{table_id}", writes=[{"type": "select", "user": user}])
    policy = {"user": "oidc~alice", "row-filter": ENG_ONLY, "columns": ["id", "dept", "name"]}
    response = http.post(f"/permissions/warehouse/{warehouse}/table/{table_id}/read-policies", json=policy)
    assert response.status_code == 204, response.text
    return table_id


def test_principal_under_policy_reads_only_allowed_rows_and_columns_through_plans(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, people: str
) -> None:
    alice = _catalog(authz_catalog, idp, "alice")
    assert alice.properties.get("scan-planning-mode") == "server"  # /config told her client to plan here
    table = alice.load_table("hr.people")
    rows = _planned_rows(table, ("id", "dept", "name"))
    assert len(rows) == 6
    assert {row["dept"] for row in rows} == {"eng"}
    assert set(rows[0]) == {"id", "dept", "name"}

    bob = _catalog(authz_catalog, idp, "bob")  # no policy: every row, every column, planned by his client
    assert bob.properties.get("scan-planning-mode") is None
    assert len(bob.load_table("hr.people").scan().to_arrow()) == 18


def test_principal_under_policy_is_refused_hidden_columns_with_403(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, people: str
) -> None:
    table = _catalog(authz_catalog, idp, "alice").load_table("hr.people")
    with pytest.raises(ForbiddenError, match="salary"):
        list(table.scan(selected_fields=("id", "salary")).plan_files())
    with pytest.raises(ForbiddenError, match="all columns"):
        list(table.scan().plan_files())  # no select: every column, salary included
    with pytest.raises(ForbiddenError, match="filter on"):
        list(table.scan(row_filter="salary > 3000", selected_fields=("id",)).plan_files())


def test_load_table_under_policy_says_plan_on_server_and_plan_ids_are_per_principal(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, people: str
) -> None:
    prefix = _id(authz_catalog, "SELECT id FROM warehouses")
    base = f"{authz_catalog.catalog_uri}/v1/{prefix}/namespaces/hr/tables/people"
    alice = {"Authorization": f"Bearer {idp.token('alice')}", "X-Iceberg-Access-Delegation": "vended-credentials"}
    loaded = httpx.get(base, headers=alice, timeout=30).json()
    assert loaded["config"]["scan-planning-mode"] == "server"
    assert not loaded.get("storage-credentials")
    assert not any(key.startswith(("s3.", "adls.", "gcs.")) for key in loaded["config"])
    planned = httpx.post(f"{base}/plan", json={"select": ["id", "name"]}, headers=alice, timeout=30).json()
    assert planned["status"] == "completed"
    assert all(task["residual-filter"] == ENG_ONLY for task in planned["file-scan-tasks"])
    bob = {"Authorization": f"Bearer {idp.token('bob')}"}
    stolen = httpx.get(f"{base}/plan/{planned['plan-id']}", headers=bob, timeout=30)
    assert stolen.status_code == 404
    assert stolen.json()["error"]["type"] == "NoSuchPlanIdException"


def test_read_policies_are_managed_by_who_manages_grants(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, people: str
) -> None:
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    path = f"/permissions/warehouse/{warehouse}/table/{people}/read-policies"
    listed = _management(authz_catalog, idp, "admin").get(path).json()["policies"]
    assert listed == [{"user": "oidc~alice", "row-filter": ENG_ONLY, "columns": ["id", "dept", "name"]}]
    alice = _management(authz_catalog, idp, "alice")
    assert alice.get(path).status_code == 403
    assert alice.delete(path, params={"user": "oidc~alice"}).status_code == 403
    bad = _management(authz_catalog, idp, "admin").post(path, json={"user": "oidc~bob", "row-filter": {"type": "x"}})
    assert bad.status_code == 400
    removed = _management(authz_catalog, idp, "admin").delete(path, params={"user": "oidc~alice"})
    assert removed.status_code == 204
    table = _catalog(authz_catalog, idp, "alice").load_table("hr.people")
    assert len(table.scan().to_arrow()) == 18  # no policy left: every row and column


def test_principal_under_policy_plans_on_server_whatever_the_warehouse_and_table_say(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, people: str
) -> None:
    admin = _catalog(authz_catalog, idp, "admin")
    admin.load_table("hr.people").transaction().set_properties(
        {"catalog-es.scan-planning-mode": "client"}
    ).commit_transaction()
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    changed = _management(authz_catalog, idp, "admin").post(
        f"/warehouse/{warehouse}/scan-planning", json={"mode": "client"}
    )
    assert changed.status_code == 204, changed.text
    base = f"{authz_catalog.catalog_uri}/v1/{warehouse}/namespaces/hr/tables/people"

    assert _catalog(authz_catalog, idp, "alice").properties.get("scan-planning-mode") == "server"
    alice = httpx.get(base, headers={"Authorization": f"Bearer {idp.token('alice')}"}, timeout=30).json()
    assert alice["config"]["scan-planning-mode"] == "server"
    assert _catalog(authz_catalog, idp, "bob").properties.get("scan-planning-mode") is None
    bob = httpx.get(base, headers={"Authorization": f"Bearer {idp.token('bob')}"}, timeout=30).json()
    assert "scan-planning-mode" not in bob.get("config", {})


def test_warehouse_scan_planning_mode_needs_modify_on_the_warehouse(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, people: str
) -> None:
    admin, bob = (_management(authz_catalog, idp, client) for client in ("admin", "bob"))
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    refused = bob.post(f"/warehouse/{warehouse}/scan-planning", json={"mode": "server"})  # only `select` on a table
    assert refused.status_code in (403, 404), refused.text
    assert admin.get(f"/warehouse/{warehouse}").json()["scan-planning"] is None  # nothing recorded
    _granted(admin, f"warehouse/{warehouse}", writes=[{"type": "modify", "user": "oidc~bob"}])
    assert bob.post(f"/warehouse/{warehouse}/scan-planning", json={"mode": "server"}).status_code == 204
    assert admin.get(f"/warehouse/{warehouse}").json()["scan-planning"] == "server"
    assert _catalog(authz_catalog, idp, "bob").properties.get("scan-planning-mode") == "server"
