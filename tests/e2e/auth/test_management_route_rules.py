"""The users, roles and permissions routes refuse in their declared rule (api/management/grant_rules.py), with the
handler deciding nothing: each request below would succeed if its route's rule let everyone through. Hidden
objects answer exactly as missing ones; visible ones without the privilege, 403. Real OpenID provider, builtin
authorization."""

from __future__ import annotations

import httpx
import psycopg
import pytest

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e

FORBIDDEN = (403, "ForbiddenException")


def _client(catalog: RunningCatalog, idp: OpenIdProvider, who: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(who)}"}
    return httpx.Client(base_url=f"{catalog.base_url}/management/v1", headers=headers, timeout=60)


def _warehouse_id(catalog: RunningCatalog) -> str:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        row = conn.execute("SELECT id FROM warehouses").fetchone()
    assert row is not None
    return str(row[0])


def _grant(admin: httpx.Client, path: str, privilege: str, user: str) -> None:
    body = {"writes": [{"type": privilege, "user": user}], "deletes": []}
    response = admin.post(f"/permissions/{path}/assignments", json=body)
    assert response.status_code == 204, response.text


def test_users_roles_and_permissions_refuse_a_caller_without_grants_in_their_rules(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    admin, bob = _client(authz_catalog, idp, "admin"), _client(authz_catalog, idp, "bob")
    for client in (admin, bob, _client(authz_catalog, idp, "alice")):
        assert client.get("/whoami").status_code == 200  # provisioned: grants and lookups can name them
    role = admin.post("/role", json={"name": "auditors"})
    assert role.status_code == 201, role.text
    role_id, warehouse = role.json()["id"], _warehouse_id(authz_catalog)
    no_role, no_project, no_warehouse = (404, "NoSuchRoleException"), (404, "NoSuchProjectException"), None
    refused: list[tuple[str, str, object, tuple[int, str] | None]] = [
        # users: their own record only
        ("POST", "/user", {"id": "oidc~alice", "name": "Alice"}, FORBIDDEN),
        ("GET", "/user", None, FORBIDDEN),
        ("GET", "/user/oidc~alice", None, FORBIDDEN),
        ("DELETE", "/user/oidc~alice", None, FORBIDDEN),
        # roles: a role bob may not see is missing; so is a project he may not see
        ("POST", "/role", {"name": "mine"}, no_project),
        ("GET", f"/role/{role_id}", None, no_role),
        ("POST", f"/role/{role_id}", {"name": "renamed"}, no_role),
        ("DELETE", f"/role/{role_id}", None, no_role),
        ("GET", f"/role/{role_id}/members", None, no_role),
        ("POST", f"/role/{role_id}/members", {"members": [{"user": "oidc~bob"}]}, no_role),
        ("DELETE", f"/role/{role_id}/members/user/oidc~admin", None, no_role),
        # assignments: the server's need a grant right on it; hidden objects are missing
        ("GET", "/permissions/server/assignments", None, FORBIDDEN),
        ("POST", "/permissions/server/assignments", {"writes": [{"type": "admin", "user": "oidc~bob"}]}, FORBIDDEN),
        ("GET", "/permissions/project/assignments", None, no_project),
        (
            "POST",
            "/permissions/project/assignments",
            {"writes": [{"type": "project_admin", "user": "oidc~bob"}]},
            no_project,
        ),
        ("GET", f"/permissions/warehouse/{warehouse}/assignments", None, no_warehouse),
        (
            "POST",
            f"/permissions/warehouse/{warehouse}/assignments",
            {"writes": [{"type": "ownership", "user": "oidc~bob"}]},
            no_warehouse,
        ),
        ("GET", f"/permissions/warehouse/{warehouse}/effective-assignments", None, no_warehouse),
        ("GET", f"/permissions/warehouse/{warehouse}", None, no_warehouse),
        ("POST", f"/permissions/warehouse/{warehouse}/managed-access", {"managed-access": True}, no_warehouse),
        ("GET", f"/permissions/role/{role_id}/assignments", None, no_role),
        # asking about the server for another user needs manage_grants on it; a hidden object is missing
        (
            "POST",
            "/permissions/check",
            {"object-type": "server", "privilege": "admin", "user": "oidc~admin"},
            FORBIDDEN,
        ),
        (
            "POST",
            "/permissions/check",
            {"object-type": "warehouse", "object-id": warehouse, "privilege": "select"},
            no_warehouse,
        ),
        (
            "POST",
            "/permissions/batch-check",
            {"checks": [{"object-type": "server", "privilege": "admin", "user": "oidc~admin"}]},
            FORBIDDEN,
        ),
    ]
    for method, path, body, expected in refused:
        response = bob.request(method, path, json=body)
        status, error_type = expected or (404, "NoSuchWarehouseException")
        assert response.status_code == status, f"{method} {path}: {response.status_code} {response.text}"
        assert_error(response, status, error_type)

    assert bob.get("/role").json()["roles"] == []  # a listing filtered per role, not refused
    assert [r["id"] for r in admin.get("/role").json()["roles"]] == [role_id]
    assert bob.get("/user/oidc~bob").status_code == 200  # his own record
    assert admin.get("/permissions/server/assignments").json()["assignments"] == [
        {"type": "admin", "user": "oidc~admin"}
    ]
    assert admin.get("/user/oidc~alice").status_code == 200, "nothing bob asked for was done"


def test_a_visible_object_answers_403_to_a_caller_who_may_not_grant_on_it(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    admin, bob = _client(authz_catalog, idp, "admin"), _client(authz_catalog, idp, "bob")
    assert bob.get("/whoami").status_code == 200
    warehouse = _warehouse_id(authz_catalog)
    _grant(admin, f"warehouse/{warehouse}", "select", "oidc~bob")  # he sees it, may not grant on it

    writes = {"writes": [{"type": "ownership", "user": "oidc~bob"}]}
    assert_error(bob.post(f"/permissions/warehouse/{warehouse}/assignments", json=writes), *FORBIDDEN)
    assert_error(bob.get(f"/permissions/warehouse/{warehouse}/assignments"), *FORBIDDEN)
    assert_error(bob.get(f"/permissions/warehouse/{warehouse}/effective-assignments"), *FORBIDDEN)
    assert_error(
        bob.post(f"/permissions/warehouse/{warehouse}/managed-access", json={"managed-access": True}), *FORBIDDEN
    )
    assert bob.get(f"/permissions/warehouse/{warehouse}").json() == {
        "managed-access": False,
        "managed-access-inherited": False,
    }
    check = {"object-type": "warehouse", "object-id": warehouse, "privilege": "select"}
    assert bob.post("/permissions/check", json=check).json() == {"allowed": True}
    assert_error(bob.post("/permissions/check", json={**check, "user": "oidc~admin"}), *FORBIDDEN)
    owners = admin.get(f"/permissions/warehouse/{warehouse}/assignments").json()["assignments"]
    assert {"type": "ownership", "user": "oidc~bob"} not in owners
