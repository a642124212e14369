"""Read policies (issue 33): a principal under a row filter and a column list reads, through plans, only the
allowed rows and columns; it is refused forbidden columns, and loadTable hands it no direct storage access."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.schema import Schema
from pyiceberg.table import FileScanTask, Table
from pyiceberg.types import LongType, NestedField, StringType

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import Warehouse, _granted, _management, _new_warehouse, _table_id
from tests.e2e.conftest import RunningCatalog, eventually
from tests.planning_tables import commit_manifests, position_delete_file

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


def _catalog(catalog: RunningCatalog, idp: OpenIdProvider, client: str, warehouse: Warehouse) -> Catalog:
    secret, _ = idp.clients[client]
    auth = {"credential": f"{client}:{secret}", "oauth2-server-uri": idp.token_endpoint}
    return load_catalog(client, type="rest", uri=catalog.catalog_uri, warehouse=warehouse.name, **auth)


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
def own_warehouse(module_authz_catalog: RunningCatalog, idp: OpenIdProvider, tmp_path: Path) -> Warehouse:
    """This test's own file warehouse on the module's one server (`module_authz_catalog`)."""
    return _new_warehouse(module_authz_catalog, idp, tmp_path / "warehouse")


@pytest.fixture
def authz_catalog(module_authz_catalog: RunningCatalog) -> RunningCatalog:
    """The module's one server: each test acts in its own warehouse (`own_warehouse`)."""
    return module_authz_catalog


@pytest.fixture
def people(authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse) -> str:
    """In the test's own warehouse, hr.people (two appends, unpartitioned); alice and bob may select it; alice is
    under an eng-only, no-salary policy. Returns the table id."""
    admin = _catalog(authz_catalog, idp, "admin", own_warehouse)
    admin.create_namespace("hr")
    table = admin.create_table("hr.people", schema=SCHEMA)
    table.append(_rows(0))
    table.append(_rows(100))
    for client in ("alice", "bob"):  # their first authenticated call records them
        httpx.get(
            f"{authz_catalog.catalog_uri}/v1/config",
            params={"warehouse": own_warehouse.name},
            headers={"Authorization": f"Bearer {idp.token(client)}"},
        )
    table_id = _table_id(authz_catalog, "people", own_warehouse.id)
    warehouse = own_warehouse.id
    http = _management(authz_catalog, idp, "admin")
    for user in ("oidc~alice", "oidc~bob"):
        _granted(http, f"warehouse/{warehouse}/table/{table_id}", writes=[{"type": "select", "user": user}])
    policy = {"user": "oidc~alice", "row-filter": ENG_ONLY, "columns": ["id", "dept", "name"]}
    response = http.post(f"/permissions/warehouse/{warehouse}/table/{table_id}/read-policies", json=policy)
    assert response.status_code == 204, response.text
    return table_id


def test_principal_under_policy_reads_only_allowed_rows_and_columns_through_plans(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    alice = _catalog(authz_catalog, idp, "alice", own_warehouse)
    assert alice.properties.get("scan-planning-mode") == "server"  # /config told her client to plan here
    table = alice.load_table("hr.people")
    rows = _planned_rows(table, ("id", "dept", "name"))
    assert len(rows) == 6
    assert {row["dept"] for row in rows} == {"eng"}
    assert set(rows[0]) == {"id", "dept", "name"}

    # No policy for bob: every row, every column, planned by his client.
    bob = _catalog(authz_catalog, idp, "bob", own_warehouse)
    assert bob.properties.get("scan-planning-mode") is None
    assert len(bob.load_table("hr.people").scan().to_arrow()) == 18


def _files_read(table: Table, tasks: list[FileScanTask]) -> list[dict[str, Any]]:
    """The planned files as they are on storage, whole: what any reader of the plan's files can see."""
    rows: list[dict[str, Any]] = []
    for task in tasks:
        with table.io.new_input(task.file.file_path).open() as stream:
            rows.extend(pq.read_table(stream).to_pylist())
    return rows


def test_stock_pyiceberg_reads_only_allowed_rows_and_columns_when_it_ignores_residuals(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    table = _catalog(authz_catalog, idp, "alice", own_warehouse).load_table("hr.people")
    read = table.scan(selected_fields=("id", "dept", "name")).to_arrow()  # pyiceberg's own reader, no patching
    assert read.column_names == ["id", "dept", "name"]
    assert sorted(read["id"].to_pylist()) == [0, 3, 6, 100, 103, 106]
    assert set(read["dept"].to_pylist()) == {"eng"}
    narrowed = table.scan(row_filter="id >= 100", selected_fields=("id", "name")).to_arrow()
    assert sorted(narrowed["id"].to_pylist()) == [100, 103, 106]
    assert table.scan(selected_fields=("id",)).count() == 6  # from the copies' record counts

    tasks = list(table.scan(selected_fields=("id", "name")).plan_files())
    on_storage = _files_read(table, tasks)  # the files themselves hold nothing else
    assert {row["dept"] for row in on_storage} == {"eng"}
    assert all(set(row) == {"id", "dept", "name"} for row in on_storage)
    again = list(table.scan(selected_fields=("id",), row_filter="id < 50").plan_files())
    assert {task.file.file_path for task in again} <= {task.file.file_path for task in tasks}  # copied once

    bob = _catalog(authz_catalog, idp, "bob", own_warehouse).load_table("hr.people")
    assert len(bob.scan().to_arrow()) == 18

    copies = Path(tasks[0].file.file_path.removeprefix("file://")).parent
    assert copies.parent.name == "policy-files"
    _catalog(authz_catalog, idp, "admin", own_warehouse).purge_table("hr.people")
    assert eventually(lambda: not copies.parent.exists())  # the copies are the table's rows: purged with it


def test_stock_pyiceberg_under_policy_reads_v2_table_with_position_deletes_applied(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    admin = _catalog(authz_catalog, idp, "admin", own_warehouse)
    table = admin.create_table("hr.deleted", schema=SCHEMA, properties={"format-version": "2"})
    table.append(_rows(0))
    table.append(_rows(100))
    first = sorted(task.file.file_path for task in table.scan().plan_files())[0]
    first_ids = pq.read_table(table.io.new_input(first).open())["id"].to_pylist()
    commit_manifests(table, [], [position_delete_file(table, first, [0, 3, 4])])  # one eng row, one eng, one ops
    deleted = {first_ids[0], first_ids[3]}
    warehouse = own_warehouse.id
    table_id = _table_id(authz_catalog, "deleted", own_warehouse.id)
    http = _management(authz_catalog, idp, "admin")
    _granted(http, f"warehouse/{warehouse}/table/{table_id}", writes=[{"type": "select", "user": "oidc~alice"}])
    policy = {"user": "oidc~alice", "row-filter": ENG_ONLY, "columns": ["id", "dept"]}
    created = http.post(f"/permissions/warehouse/{warehouse}/table/{table_id}/read-policies", json=policy)
    assert created.status_code == 204, created.text

    alice = _catalog(authz_catalog, idp, "alice", own_warehouse).load_table("hr.deleted")
    tasks = list(alice.scan(selected_fields=("id", "dept")).plan_files())
    assert tasks
    assert all(not task.delete_files for task in tasks)  # the deletes are applied in the copies
    read = alice.scan(selected_fields=("id", "dept")).to_arrow()
    assert sorted(read["id"].to_pylist()) == sorted({0, 3, 6, 100, 103, 106} - deleted)
    assert set(read["dept"].to_pylist()) == {"eng"}
    assert sorted(row["id"] for row in _files_read(alice, tasks)) == sorted(read["id"].to_pylist())


def test_principal_under_policy_is_refused_hidden_columns_with_403(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    table = _catalog(authz_catalog, idp, "alice", own_warehouse).load_table("hr.people")
    with pytest.raises(ForbiddenError, match="salary"):
        list(table.scan(selected_fields=("id", "salary")).plan_files())
    with pytest.raises(ForbiddenError, match="all columns"):
        list(table.scan().plan_files())  # no select: every column, salary included
    with pytest.raises(ForbiddenError, match="filter on"):
        list(table.scan(row_filter="salary > 3000", selected_fields=("id",)).plan_files())


def test_load_table_under_policy_says_plan_on_server_and_plan_ids_are_per_principal(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    prefix = own_warehouse.id
    base = f"{authz_catalog.catalog_uri}/v1/{prefix}/namespaces/hr/tables/people"
    alice = {"Authorization": f"Bearer {idp.token('alice')}", "X-Iceberg-Access-Delegation": "vended-credentials"}
    loaded = httpx.get(base, headers=alice, timeout=30).json()
    assert loaded["config"]["scan-planning-mode"] == "server"
    assert not loaded.get("storage-credentials")
    assert not any(key.startswith(("s3.", "adls.", "gcs.")) for key in loaded["config"])
    planned = httpx.post(f"{base}/plan", json={"select": ["id", "name"]}, headers=alice, timeout=30).json()
    assert planned["status"] == "completed"
    tasks = planned["file-scan-tasks"]
    assert len(tasks) == 2  # each file copied: its eng rows, without salary; nothing left for a residual
    assert all("/policy-files/" in task["data-file"]["file-path"] for task in tasks)
    assert all("residual-filter" not in task and task["data-file"]["record-count"] == 3 for task in tasks)
    assert not any(4 in task["data-file"].get("lower-bounds", {"keys": []})["keys"] for task in tasks)
    bob = {"Authorization": f"Bearer {idp.token('bob')}"}
    stolen = httpx.get(f"{base}/plan/{planned['plan-id']}", headers=bob, timeout=30)
    assert stolen.status_code == 404
    assert stolen.json()["error"]["type"] == "NoSuchPlanIdException"


def test_read_policies_are_managed_by_who_manages_grants(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    warehouse = own_warehouse.id
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
    table = _catalog(authz_catalog, idp, "alice", own_warehouse).load_table("hr.people")
    assert len(table.scan().to_arrow()) == 18  # no policy left: every row and column


def test_principal_under_policy_plans_on_server_whatever_the_warehouse_and_table_say(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    admin = _catalog(authz_catalog, idp, "admin", own_warehouse)
    admin.load_table("hr.people").transaction().set_properties(
        {"catalog-es.scan-planning-mode": "client"}
    ).commit_transaction()
    warehouse = own_warehouse.id
    changed = _management(authz_catalog, idp, "admin").post(
        f"/warehouse/{warehouse}/scan-planning", json={"mode": "client"}
    )
    assert changed.status_code == 204, changed.text
    base = f"{authz_catalog.catalog_uri}/v1/{warehouse}/namespaces/hr/tables/people"

    assert _catalog(authz_catalog, idp, "alice", own_warehouse).properties.get("scan-planning-mode") == "server"
    alice = httpx.get(base, headers={"Authorization": f"Bearer {idp.token('alice')}"}, timeout=30).json()
    assert alice["config"]["scan-planning-mode"] == "server"
    assert _catalog(authz_catalog, idp, "bob", own_warehouse).properties.get("scan-planning-mode") is None
    bob = httpx.get(base, headers={"Authorization": f"Bearer {idp.token('bob')}"}, timeout=30).json()
    assert "scan-planning-mode" not in bob.get("config", {})


def test_warehouse_scan_planning_mode_needs_modify_on_the_warehouse(
    authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, people: str
) -> None:
    admin, bob = (_management(authz_catalog, idp, client) for client in ("admin", "bob"))
    warehouse = own_warehouse.id
    refused = bob.post(f"/warehouse/{warehouse}/scan-planning", json={"mode": "server"})  # only `select` on a table
    assert refused.status_code in (403, 404), refused.text
    assert admin.get(f"/warehouse/{warehouse}").json()["scan-planning"] is None  # nothing recorded
    _granted(admin, f"warehouse/{warehouse}", writes=[{"type": "modify", "user": "oidc~bob"}])
    assert bob.post(f"/warehouse/{warehouse}/scan-planning", json={"mode": "server"}).status_code == 204
    assert admin.get(f"/warehouse/{warehouse}").json()["scan-planning"] == "server"
    assert _catalog(authz_catalog, idp, "bob", own_warehouse).properties.get("scan-planning-mode") == "server"
