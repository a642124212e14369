"""Builtin authorization end to end: a real OpenID provider, pyiceberg as three users (a server admin and two
others), grants at warehouse, namespace and table level, no existence leaks, filtered listings, nested roles,
managed access and revocations that hold for the very next request."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import NamedTuple

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError, NoSuchNamespaceError, NoSuchTableError, RESTError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
ROWS = pa.table({"id": pa.array([1, 2, 3], type=pa.int64())})


class Warehouse(NamedTuple):
    """A test's own warehouse on a shared server: its name and id."""

    name: str
    id: str


def _new_warehouse(catalog: RunningCatalog, idp: OpenIdProvider, location: Path) -> Warehouse:
    """A new file warehouse at `location`, created by the admin under a name of its own."""
    name = f"w-{uuid.uuid4().hex[:12]}"
    body = {"warehouse-name": name, "storage-profile": {"type": "file", "location": str(location)}}
    with _management(catalog, idp, "admin") as admin:
        created = admin.post("/warehouse", json=body)
    assert created.status_code == 201, created.text
    return Warehouse(name, str(created.json()["warehouse-id"]))


def _pyiceberg(catalog: RunningCatalog, idp: OpenIdProvider, client: str, warehouse: str = "demo"):
    secret, _ = idp.clients[client]
    return load_catalog(
        client,
        type="rest",
        uri=catalog.catalog_uri,
        warehouse=warehouse,
        credential=f"{client}:{secret}",
        **{"oauth2-server-uri": idp.token_endpoint},
    )


def _management(catalog: RunningCatalog, idp: OpenIdProvider, client: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(client)}"}
    return httpx.Client(base_url=f"{catalog.base_url}/management/v1", headers=headers, timeout=30)


def _id(catalog: RunningCatalog, query: str, *params: object) -> str:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        row = conn.execute(query, params).fetchone()
    assert row is not None, query
    return str(row[0])


def _namespace_id(catalog: RunningCatalog, name: str, warehouse_id: str | None = None) -> str:
    """The namespace's id (in the one warehouse of a server, or in `warehouse_id`'s)."""
    if warehouse_id is None:
        return _id(catalog, "SELECT id FROM namespaces WHERE parts = %s", [name])
    return _id(catalog, "SELECT id FROM namespaces WHERE parts = %s AND warehouse_id = %s", [name], warehouse_id)


def _table_id(catalog: RunningCatalog, name: str, warehouse_id: str | None = None) -> str:
    """The table's id (in the one warehouse of a server, or in `warehouse_id`'s)."""
    if warehouse_id is None:
        return _id(catalog, "SELECT id FROM tables WHERE name = %s", name)
    return _id(catalog, "SELECT id FROM tables WHERE name = %s AND warehouse_id = %s", name, warehouse_id)


def _assign(http: httpx.Client, path: str, *, writes=(), deletes=()) -> httpx.Response:
    return http.post(f"/permissions/{path}/assignments", json={"writes": list(writes), "deletes": list(deletes)})


def _granted(http: httpx.Client, path: str, *, writes=(), deletes=()) -> None:
    response = _assign(http, path, writes=writes, deletes=deletes)
    assert response.status_code == 204, response.text


@pytest.fixture
def own_warehouse(module_authz_catalog: RunningCatalog, idp: OpenIdProvider, tmp_path: Path) -> Warehouse:
    """This test's own file warehouse on the module's one server (`module_authz_catalog`)."""
    return _new_warehouse(module_authz_catalog, idp, tmp_path / "warehouse")


@pytest.fixture
def seeded(module_authz_catalog: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse) -> RunningCatalog:
    """In the test's own warehouse, the admin creates sales.{orders,items} and hr.salaries; alice and bob exist
    (their /config call)."""
    authz_catalog = module_authz_catalog
    admin = _pyiceberg(authz_catalog, idp, "admin", own_warehouse.name)
    for namespace in ("sales", "hr"):
        admin.create_namespace(namespace)
    for name in ("sales.orders", "sales.items", "hr.salaries"):
        admin.create_table(name, schema=SCHEMA)
    for client in ("alice", "bob"):
        config = httpx.get(
            f"{authz_catalog.catalog_uri}/v1/config",
            params={"warehouse": own_warehouse.name},
            headers={"Authorization": f"Bearer {idp.token(client)}"},
        )
        assert config.status_code == 404  # nothing granted yet: the warehouse does not exist for them
    return authz_catalog


def test_users_see_and_do_only_what_is_granted_when_authz_is_builtin(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse
):
    admin = _management(seeded, idp, "admin")
    me = admin.get("/whoami").json()
    assert (me["id"], me["name"], me["email"]) == ("oidc~admin", "The Admin", "admin@example.com")
    sales = _namespace_id(seeded, "sales", own_warehouse.id)
    _granted(admin, f"namespace/{sales}", writes=[{"type": "select", "user": "oidc~alice"}])
    assignments = admin.get(f"/permissions/namespace/{sales}/assignments").json()["assignments"]
    assert {"type": "select", "user": "oidc~alice"} in assignments
    assert {"type": "ownership", "user": "oidc~admin"} in assignments  # the creator owns it
    denied = _management(seeded, idp, "alice").get(f"/permissions/namespace/{sales}/assignments")
    assert denied.status_code == 403, denied.text
    salaries = _table_id(seeded, "salaries", own_warehouse.id)
    warehouse = own_warehouse.id
    response = _assign(
        admin, f"warehouse/{warehouse}/table/{salaries}", writes=[{"type": "describe", "user": "oidc~bob"}]
    )
    assert response.status_code == 204, response.text

    alice = _pyiceberg(seeded, idp, "alice", own_warehouse.name)
    assert alice.list_namespaces() == [("sales",)]
    assert sorted(alice.list_tables("sales")) == [("sales", "items"), ("sales", "orders")]
    orders = alice.load_table("sales.orders")
    with pytest.raises(ForbiddenError):
        orders.append(ROWS)  # select is not modify
    with pytest.raises(NoSuchTableError):
        alice.load_table("hr.salaries")  # exists, but not for her
    with pytest.raises(NoSuchNamespaceError):
        alice.list_tables("hr")
    with pytest.raises(ForbiddenError):
        alice.create_namespace("mine")  # she sees the warehouse but may not create in it
    with pytest.raises(ForbiddenError):
        alice.drop_table("sales.orders")

    bob = _pyiceberg(seeded, idp, "bob", own_warehouse.name)
    assert bob.list_namespaces() == [("hr",)]
    assert bob.list_tables("hr") == [("hr", "salaries")]
    bob.load_table("hr.salaries")
    with pytest.raises(NoSuchNamespaceError):
        bob.list_tables("sales")

    # Revocation holds for the very next request.
    _granted(admin, f"namespace/{sales}", deletes=[{"type": "select", "user": "oidc~alice"}])
    with pytest.raises(NoSuchTableError):
        alice.load_table("sales.orders")
    with pytest.raises(RESTError, match="does not exist"):
        _pyiceberg(seeded, idp, "alice", own_warehouse.name)


def test_creator_owns_what_they_create_in_a_warehouse_they_may_create_in(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse
):
    admin = _management(seeded, idp, "admin")
    warehouse = own_warehouse.id
    _granted(admin, f"warehouse/{warehouse}", writes=[{"type": "create", "user": "oidc~alice"}])
    alice = _pyiceberg(seeded, idp, "alice", own_warehouse.name)
    alice.create_namespace("alice_ns")
    table = alice.create_table("alice_ns.events", schema=SCHEMA)
    table.append(ROWS)  # owner: modify
    assert len(alice.load_table("alice_ns.events").scan().to_arrow()) == 3
    assert ("alice_ns",) in alice.list_namespaces()


def test_owners_grant_until_managed_access_is_set_and_nested_roles_carry_privileges(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse
):
    admin = _management(seeded, idp, "admin")
    warehouse = own_warehouse.id
    _granted(admin, f"warehouse/{warehouse}", writes=[{"type": "create", "user": "oidc~alice"}])
    alice_pi = _pyiceberg(seeded, idp, "alice", own_warehouse.name)
    alice_pi.create_namespace("shared")
    alice_pi.create_table("shared.data", schema=SCHEMA)
    shared = _namespace_id(seeded, "shared", own_warehouse.id)
    alice = _management(seeded, idp, "alice")
    granted = _assign(alice, f"namespace/{shared}", writes=[{"type": "select", "user": "oidc~bob"}])
    assert granted.status_code == 204, granted.text  # the owner manages grants
    assert _pyiceberg(seeded, idp, "bob", own_warehouse.name).list_tables("shared") == [("shared", "data")]

    managed = admin.post(f"/permissions/warehouse/{warehouse}/managed-access", json={"managed-access": True})
    assert managed.status_code == 204, managed.text
    refused = _assign(alice, f"namespace/{shared}", writes=[{"type": "modify", "user": "oidc~bob"}])
    assert refused.status_code == 403
    assert refused.json()["error"]["type"] == "ForbiddenException"
    state = admin.get(f"/permissions/namespace/{shared}").json()
    assert state == {"managed-access": False, "managed-access-inherited": True}

    # Nested roles: team ⊂ readers, readers may select in hr; bob joins team.
    # `readers` exactly, as carol's roles claim names it: no other test of the module makes a role of that name.
    readers = admin.post("/role", json={"name": "readers"}).json()["id"]
    team = admin.post("/role", json={"name": f"team-{uuid.uuid4().hex[:12]}"}).json()["id"]
    hr = _namespace_id(seeded, "hr", own_warehouse.id)
    _granted(admin, f"namespace/{hr}", writes=[{"type": "select", "role": readers}])
    _granted(admin, f"role/{readers}", writes=[{"type": "assignee", "role": team}])
    added = admin.post(f"/role/{team}/members", json={"members": [{"user": "oidc~bob"}]})
    assert added.status_code == 204, added.text
    assert admin.get(f"/role/{team}/members").json() == {"members": [{"user": "oidc~bob"}]}
    bob = _pyiceberg(seeded, idp, "bob", own_warehouse.name)
    assert bob.list_tables("hr") == [("hr", "salaries")]
    check = _management(seeded, idp, "bob").post(
        "/permissions/check", json={"object-type": "namespace", "object-id": hr, "privilege": "select"}
    )
    assert check.json() == {"allowed": True}
    assert admin.delete(f"/role/{team}/members/user/oidc~bob").status_code == 204
    with pytest.raises(NoSuchNamespaceError):
        bob.list_tables("hr")

    # carol is no member of anything, but her token's roles claim names `readers`.
    assert _pyiceberg(seeded, idp, "carol", own_warehouse.name).list_tables("hr") == [("hr", "salaries")]


def test_invisible_objects_answer_exactly_like_missing_ones_when_probed(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse
):
    admin = _management(seeded, idp, "admin")
    _granted(
        admin,
        f"namespace/{_namespace_id(seeded, 'sales', own_warehouse.id)}",
        writes=[{"type": "select", "user": "oidc~alice"}],
    )
    headers = {"Authorization": f"Bearer {idp.token('alice')}"}
    with httpx.Client(base_url=f"{seeded.catalog_uri}/v1/", headers=headers, timeout=30) as http:
        prefix = http.get("config", params={"warehouse": own_warehouse.name}).json()["defaults"]["prefix"]

        def probe(method: str, path: str, **kwargs) -> tuple[int, str, str]:
            response = http.request(method, f"{prefix}/{path}", **kwargs)
            error = response.json()["error"] if response.content else {"type": "", "message": ""}
            return response.status_code, error["type"], error["message"]

        commit = {"json": {"requirements": [], "updates": []}}
        for method, hidden, missing, kwargs in [
            ("GET", "namespaces/hr/tables/salaries", "namespaces/nope/tables/salaries", {}),
            ("GET", "namespaces/hr", "namespaces/nope", {}),
            ("GET", "namespaces/hr/tables", "namespaces/nope/tables", {}),
            ("POST", "namespaces/hr/tables/ghost", "namespaces/nope/tables/ghost", commit),
            ("DELETE", "namespaces/hr/tables/salaries", "namespaces/nope/tables/salaries", {}),
        ]:
            seen, absent = probe(method, hidden, **kwargs), probe(method, missing, **kwargs)
            assert seen[:2] == absent[:2], (method, hidden, seen, absent)
            assert seen[0] == 404
            assert seen[2] == absent[2].replace("nope", "hr"), (seen, absent)
        assert http.head(f"{prefix}/namespaces/hr/tables/salaries").status_code == 404
        assert http.head(f"{prefix}/namespaces/sales/tables/orders").status_code == 204


def test_config_checks_the_warehouse_of_the_header_project_when_one_is_named(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse, tmp_path
):
    admin = _management(seeded, idp, "admin")
    project = admin.post("/project", json={"project-name": f"other-{uuid.uuid4().hex[:12]}"}).json()["project-id"]
    body = {"warehouse-name": "hidden", "storage-profile": {"type": "file", "location": str(tmp_path / "hidden")}}
    created = admin.post("/warehouse", json=body, headers={"x-project-id": project})
    assert created.status_code == 201, created.text

    def config(client: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {idp.token(client)}", "x-project-id": project}
        return httpx.get(f"{seeded.catalog_uri}/v1/config", params={"warehouse": "hidden"}, headers=headers)

    assert config("admin").status_code == 200
    assert config("alice").status_code == 404  # not resolved in the default project, where no check would apply


def test_metrics_reports_on_hidden_tables_answer_like_missing_ones_and_are_dropped(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse
):
    admin = _management(seeded, idp, "admin")
    _granted(
        admin,
        f"namespace/{_namespace_id(seeded, 'sales', own_warehouse.id)}",
        writes=[{"type": "select", "user": "oidc~alice"}],
    )
    headers = {"Authorization": f"Bearer {idp.token('alice')}"}
    report = {"report-type": "scan-report", "table-name": "t", "snapshot-id": 1, "filter": True, "metrics": {}}
    with httpx.Client(base_url=f"{seeded.catalog_uri}/v1/", headers=headers, timeout=30) as http:
        prefix = http.get("config", params={"warehouse": own_warehouse.name}).json()["defaults"]["prefix"]
        statuses = {
            path: http.post(f"{prefix}/namespaces/{path}/metrics", json=report).status_code
            for path in ("hr/tables/salaries", "hr/tables/ghost", "nope/tables/ghost", "sales/tables/orders")
        }

    assert statuses == dict.fromkeys(statuses, 204)
    with psycopg.connect(seeded.env["CATALOG_ES__PG_DSN"]) as conn:
        query = "SELECT table_id FROM table_metrics_reports WHERE warehouse_id = %s"  # this test's own
        kept = conn.execute(query, [own_warehouse.id]).fetchall()
    assert [str(row[0]) for row in kept] == [_table_id(seeded, "orders", own_warehouse.id)]


def test_effective_assignments_name_each_grant_with_the_object_it_comes_from(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse
):
    admin = _management(seeded, idp, "admin")
    warehouse = own_warehouse.id
    sales, orders = _namespace_id(seeded, "sales", own_warehouse.id), _table_id(seeded, "orders", own_warehouse.id)
    _granted(admin, f"warehouse/{warehouse}", writes=[{"type": "describe", "user": "oidc~bob"}])
    _granted(admin, f"namespace/{sales}", writes=[{"type": "select", "user": "oidc~alice"}])
    _granted(admin, f"warehouse/{warehouse}/table/{orders}", writes=[{"type": "modify", "user": "oidc~bob"}])

    path = f"/permissions/warehouse/{warehouse}/table/{orders}/effective-assignments"
    response = admin.get(path)
    assert response.status_code == 200, response.text
    found = [(a["type"], a.get("user"), a["origin-kind"], a["origin-id"]) for a in response.json()["assignments"]]
    mine = [entry for entry in found if entry[1] in ("oidc~alice", "oidc~bob")]
    assert mine == [  # nearest first: the table's own grant, then its namespace's, then its warehouse's
        ("modify", "oidc~bob", "table", orders),
        ("select", "oidc~alice", "namespace", sales),
        ("describe", "oidc~bob", "warehouse", warehouse),
    ]
    assert any(kind == "project" or kind == "server" for _, _, kind, _ in found)  # the admin's own, from above

    # bob may see the table but not read its grants; alice cannot tell hr.salaries from a missing table.
    assert _management(seeded, idp, "bob").get(path).status_code == 403
    hidden = _table_id(seeded, "salaries", own_warehouse.id)
    probe = _management(seeded, idp, "alice").get(
        f"/permissions/warehouse/{warehouse}/table/{hidden}/effective-assignments"
    )
    missing = _management(seeded, idp, "alice").get(
        f"/permissions/warehouse/{warehouse}/table/{uuid.uuid4()}/effective-assignments"
    )
    shape = [(r.status_code, r.json()["error"]["type"]) for r in (probe, missing)]
    assert shape == [(404, "NoSuchTableException")] * 2


def test_warehouse_rebase_mode_needs_modify_and_a_hidden_warehouse_answers_like_a_missing_one(
    seeded: RunningCatalog, idp: OpenIdProvider, own_warehouse: Warehouse
) -> None:
    admin, alice, bob = (_management(seeded, idp, client) for client in ("admin", "alice", "bob"))
    warehouse = own_warehouse.id
    _granted(admin, f"warehouse/{warehouse}", writes=[{"type": "select", "user": "oidc~alice"}])
    body = {"mode": "on"}

    denied = alice.post(f"/warehouse/{warehouse}/server-side-rebase", json=body)
    hidden = bob.post(f"/warehouse/{warehouse}/server-side-rebase", json=body)
    ghost = str(uuid.uuid4())
    missing = bob.post(f"/warehouse/{ghost}/server-side-rebase", json=body)

    assert denied.status_code == 403, denied.text
    assert hidden.status_code == missing.status_code == 404, (hidden.text, missing.text)
    assert hidden.json()["error"]["type"] == missing.json()["error"]["type"] == "NoSuchWarehouseException"
    assert hidden.json()["error"]["message"] == missing.json()["error"]["message"].replace(ghost, warehouse)
    assert admin.get(f"/warehouse/{warehouse}").json()["server-side-rebase"] is None  # nothing recorded

    _granted(admin, f"warehouse/{warehouse}", writes=[{"type": "modify", "user": "oidc~alice"}])
    assert alice.post(f"/warehouse/{warehouse}/server-side-rebase", json=body).status_code == 204
    assert admin.get(f"/warehouse/{warehouse}").json()["server-side-rebase"] == "on"
