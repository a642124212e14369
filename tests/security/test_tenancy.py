"""Tenancy: every decision on the object acted on, idempotent replays only for their own caller, restricted
user listings and metrics (issue 13, items 4 and 5). Real OpenID provider, builtin authorization, moto S3."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from catalog_es.identifiers import NIL_PROJECT_ID
from tests.e2e.auth.openid_provider import AUDIENCE, OpenIdProvider
from tests.e2e.conftest import RunningCatalog, free_port, start_catalog, stop_catalog
from tests.e2e.rest_helpers import assert_error
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket

pytestmark = pytest.mark.e2e

CREDENTIAL = {
    "type": "s3",
    "credential-type": "access-key",
    "access-key-id": ACCESS_KEY_ID,
    "secret-access-key": SECRET_ACCESS_KEY,
}
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _client(catalog: RunningCatalog, idp: OpenIdProvider, who: str, project: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(who)}"}
    if project is not None:
        headers["x-project-id"] = project
    return httpx.Client(base_url=catalog.base_url, headers=headers, timeout=60)


def _profile(endpoint: str, bucket: str) -> dict[str, Any]:
    return {
        "type": "s3",
        "bucket": bucket,
        "key-prefix": "lake",
        "region": REGION,
        "endpoint": endpoint,
        "path-style-access": True,
        "flavor": "s3-compat",
        "share-static-credentials-with-clients": True,
    }


def _warehouse(http: httpx.Client, endpoint: str, name: str, **extra: Any) -> str:
    """A new S3 warehouse on a new bucket, named `name` plus a suffix no other test uses; returns its id."""
    body = {"warehouse-name": _unique(name), "storage-profile": _profile(endpoint, make_bucket(endpoint))}
    response = http.post("/management/v1/warehouse", json={**body, "storage-credential": CREDENTIAL, **extra})
    assert response.status_code == 201, response.text
    return str(response.json()["warehouse-id"])


def _unique(name: str) -> str:
    """`name` with a suffix: the module's tests share one server (tests/e2e/auth/conftest.py)."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


def _rows(catalog: RunningCatalog, query: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        return conn.execute(query, params).fetchall()


# An idempotency record's identity (its primary key).
RECORD = "key, principal, project, fingerprint"


def _idempotency_records(catalog: RunningCatalog) -> set[tuple[Any, ...]]:
    """The identities of the idempotency records stored so far."""
    return set(_rows(catalog, f"SELECT {RECORD} FROM idempotency_keys"))


def _grant(admin: httpx.Client, path: str, privilege: str, user: str, **headers: str) -> None:
    body = {"writes": [{"type": privilege, "user": user}], "deletes": []}
    response = admin.post(f"/management/v1/permissions/{path}/assignments", json=body, headers=headers)
    assert response.status_code == 204, response.text


def _known(*clients: httpx.Client) -> None:
    """The users exist (provisioned on their first request), so that grants can name them."""
    for client in clients:
        assert client.get("/management/v1/whoami").status_code == 200


def _table(admin: httpx.Client, warehouse: str, namespace: str, name: str, key: str | None = None) -> httpx.Response:
    created = admin.post(f"/catalog/v1/{warehouse}/namespaces", json={"namespace": [namespace]})
    assert created.status_code in (200, 409), created.text
    headers = {"Idempotency-Key": key} if key else {}
    return admin.post(
        f"/catalog/v1/{warehouse}/namespaces/{namespace}/tables", json={"name": name, "schema": SCHEMA}, headers=headers
    )


def test_project_admin_of_b_cannot_create_a_warehouse_in_project_a_by_body_project_id(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider, s3_endpoint: str
) -> None:
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    project_b = admin.post("/management/v1/project", json={"project-name": "B"}).json()["project-id"]
    alice = _client(module_keyed_authz_catalog, idp, "alice", project=project_b)
    _known(alice)
    _grant(admin, "project", "project_admin", "oidc~alice", **{"x-project-id": project_b})
    _warehouse(alice, s3_endpoint, "own")  # she may create in her own project

    stolen = _unique("stolen")
    body = {
        "warehouse-name": stolen,
        "storage-profile": _profile(s3_endpoint, make_bucket(s3_endpoint)),
        "storage-credential": CREDENTIAL,
        "project-id": str(NIL_PROJECT_ID),
    }
    response = alice.post("/management/v1/warehouse", json=body)

    assert_error(response, 404, "NoSuchProjectException")  # project A does not exist for her
    assert _rows(module_keyed_authz_catalog, "SELECT id FROM warehouses WHERE name = %s", stolen) == []
    same = alice.post("/management/v1/warehouse", json={**body, "project-id": project_b, "warehouse-name": "mine"})
    assert same.status_code == 201, same.text  # naming her own project in the body is fine


def test_replaying_an_admins_idempotency_key_as_bob_runs_as_bob(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider, s3_endpoint: str
) -> None:
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    bob = _client(module_keyed_authz_catalog, idp, "bob")
    warehouse = _warehouse(admin, s3_endpoint, "lake")
    key = str(uuid.uuid4())
    created = _table(admin, warehouse, "n", "t", key)
    assert created.status_code == 200, created.text
    assert created.json()["config"]["s3.secret-access-key"] == SECRET_ACCESS_KEY
    commit_key = str(uuid.uuid4())
    commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": "1"}}]}
    committed = admin.post(
        f"/catalog/v1/{warehouse}/namespaces/n/tables/t", json=commit, headers={"Idempotency-Key": commit_key}
    )
    assert committed.status_code == 200, committed.text

    replayed = bob.post(
        f"/catalog/v1/{warehouse}/namespaces/n/tables",
        json={"name": "t", "schema": SCHEMA},
        headers={"Idempotency-Key": key},
    )
    recommitted = bob.post(
        f"/catalog/v1/{warehouse}/namespaces/n/tables/t", json=commit, headers={"Idempotency-Key": commit_key}
    )

    for response in (replayed, recommitted):
        assert_error(response, 404, "NoSuchWarehouseException")  # what bob gets without the key
        assert "idempotent-replayed" not in response.headers
        assert SECRET_ACCESS_KEY not in response.text
    again = admin.post(
        f"/catalog/v1/{warehouse}/namespaces/n/tables",
        json={"name": "t", "schema": SCHEMA},
        headers={"Idempotency-Key": key},
    )
    assert again.headers.get("idempotent-replayed") == "true"  # the admin's own retry still replays
    assert again.json() == created.json()


def test_stored_idempotent_responses_hold_no_plaintext_secret(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider, s3_endpoint: str
) -> None:
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    earlier = _idempotency_records(module_keyed_authz_catalog)  # other tests' (the server is the module's)
    warehouse = _warehouse(admin, s3_endpoint, "shared")
    created = _table(admin, warehouse, "n", "t", str(uuid.uuid4()))
    assert created.status_code == 200, created.text
    assert SECRET_ACCESS_KEY in created.text  # the warehouse shares its static credentials with clients

    stored_now = _rows(module_keyed_authz_catalog, f"SELECT {RECORD}, body FROM idempotency_keys")
    bodies = [body for *record, body in stored_now if body is not None and tuple(record) not in earlier]

    assert len(bodies) == 1  # what this test stored: the table's creation
    stored = bytes(bodies[0])
    assert SECRET_ACCESS_KEY.encode() not in stored
    assert ACCESS_KEY_ID.encode() not in stored
    assert b"metadata-location" not in stored  # sealed as a whole, not just the credentials


def test_users_without_a_server_role_cannot_list_users_nor_read_metrics(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    admin = _client(authz_catalog, idp, "admin")
    alice = _client(authz_catalog, idp, "alice")
    _known(alice)

    assert_error(alice.get("/management/v1/user"), 403, "ForbiddenException")
    assert_error(alice.get("/management/v1/user/oidc~admin"), 403, "ForbiddenException")
    assert_error(alice.get("/metrics"), 403, "ForbiddenException")
    assert alice.get("/management/v1/user/oidc~alice").status_code == 200  # herself
    assert alice.get("/management/v1/whoami").json()["id"] == "oidc~alice"
    listed = admin.get("/management/v1/user")
    assert listed.status_code == 200, listed.text
    assert {user["id"] for user in listed.json()["users"]} == {"oidc~admin", "oidc~alice"}
    metrics = admin.get("/metrics")
    assert metrics.status_code == 200, metrics.text
    assert "catalog_es_projector_checkpoint_position" in metrics.text


def test_register_overwrite_needs_modify_however_the_flag_is_spelled(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider, s3_endpoint: str
) -> None:
    """The guard decoded the body strictly and skipped the check it could not decode; the handler decodes
    leniently (`"true"` is a bool), so a namespace creator could overwrite any table's metadata pointer."""
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    bob = _client(module_keyed_authz_catalog, idp, "bob")
    _known(bob)
    warehouse = _warehouse(admin, s3_endpoint, "lake")
    created = _table(admin, warehouse, "n", "t")
    assert created.status_code == 200, created.text
    query = "SELECT id FROM namespaces WHERE warehouse_id = %s AND parts = %s"
    namespace_id = _rows(module_keyed_authz_catalog, query, warehouse, ["n"])[0][0]
    _grant(admin, f"namespace/{namespace_id}", "create", "oidc~bob")
    location = created.json()["metadata-location"]

    for flag in (True, "true"):
        body = {"name": "t", "metadata-location": location, "overwrite": flag}
        response = bob.post(f"/catalog/v1/{warehouse}/namespaces/n/register", json=body)
        assert_error(response, 403, "ForbiddenException")


def test_table_permissions_answer_not_found_through_another_warehouses_path(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider, s3_endpoint: str
) -> None:
    """`/permissions/warehouse/{w}/table/{t}` acted on table t whatever warehouse w the path named."""
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    warehouse = _warehouse(admin, s3_endpoint, "lake")
    other = _warehouse(admin, s3_endpoint, "other")
    assert _table(admin, warehouse, "n", "t").status_code == 200
    query = "SELECT id FROM tables WHERE warehouse_id = %s AND name = 't'"
    table_id = _rows(module_keyed_authz_catalog, query, warehouse)[0][0]
    path = "/management/v1/permissions/warehouse/{}/table/{}/assignments"

    assert admin.get(path.format(warehouse, table_id)).status_code == 200
    assert_error(admin.get(path.format(other, table_id)), 404, "NoSuchTableException")
    body = {"writes": [{"type": "select", "user": "oidc~admin"}], "deletes": []}
    assert_error(admin.post(path.format(other, table_id), json=body), 404, "NoSuchTableException")


def test_permission_checks_answer_not_found_for_an_object_of_another_type(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    """`/permissions/check` decided on `object-id` whatever `object-type` said."""
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    project = str(NIL_PROJECT_ID)
    check = {"object-type": "project", "object-id": project, "privilege": "describe"}
    assert admin.post("/management/v1/permissions/check", json=check).json() == {"allowed": True}

    response = admin.post("/management/v1/permissions/check", json={**check, "object-type": "warehouse"})

    assert_error(response, 404, "NoSuchWarehouseException")


def test_a_replay_needs_the_authorization_the_original_request_passed(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider, s3_endpoint: str
) -> None:
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    bob = _client(module_keyed_authz_catalog, idp, "bob")
    _known(bob)
    warehouse = _warehouse(admin, s3_endpoint, "lake")
    assert _table(admin, warehouse, "n", "t").status_code == 200
    _grant(admin, f"warehouse/{warehouse}", "modify", "oidc~bob")
    key = str(uuid.uuid4())
    commit = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"by": "bob"}}]}
    url = f"/catalog/v1/{warehouse}/namespaces/n/tables/t"
    assert bob.post(url, json=commit, headers={"Idempotency-Key": key}).status_code == 200
    assert bob.post(url, json=commit, headers={"Idempotency-Key": key}).headers["idempotent-replayed"] == "true"
    revoke = {"writes": [], "deletes": [{"type": "modify", "user": "oidc~bob"}]}
    response = admin.post(f"/management/v1/permissions/warehouse/{warehouse}/assignments", json=revoke)
    assert response.status_code == 204, response.text

    replayed = bob.post(url, json=commit, headers={"Idempotency-Key": key})

    assert_error(replayed, 404, "NoSuchWarehouseException")  # bob no longer sees anything in the warehouse
    assert "idempotent-replayed" not in replayed.headers


def test_metrics_are_open_only_on_the_configured_scrape_port(pg_dsn: str, tmp_path: Path, idp: OpenIdProvider) -> None:
    scrape_port = free_port()
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__NATS__ENABLED": "false",
        "CATALOG_ES__OPENID_PROVIDER_URI": idp.issuer,
        "CATALOG_ES__OPENID_AUDIENCE": AUDIENCE,
        "CATALOG_ES__AUTHZ__BACKEND": "builtin",
        "CATALOG_ES__METRICS__PORT": str(scrape_port),
    }
    running = start_catalog(tmp_path / "data", env)
    try:
        scraped = httpx.get(f"http://127.0.0.1:{scrape_port}/metrics", timeout=30)
        on_api = httpx.get(f"{running.base_url}/metrics", timeout=30)
    finally:
        stop_catalog(running)

    assert scraped.status_code == 200, scraped.text
    assert "catalog_es_projector_checkpoint_position" in scraped.text
    assert_error(on_api, 401, "NotAuthorizedException")


def test_a_role_of_another_project_cannot_be_named_as_a_member_or_grantee(
    module_keyed_authz_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    """Adding members and granting acted on any role id without a decision on that role: alice, security admin of
    project B only, could tell which role ids exist in project A and link them into B's roles and grants."""
    admin = _client(module_keyed_authz_catalog, idp, "admin")
    foreign = admin.post("/management/v1/role", json={"name": _unique("a-team")})
    assert foreign.status_code == 201, foreign.text
    project_b = admin.post("/management/v1/project", json={"project-name": "B"}).json()["project-id"]
    alice = _client(module_keyed_authz_catalog, idp, "alice", project=project_b)
    _known(alice)
    _grant(admin, "project", "project_admin", "oidc~alice", **{"x-project-id": project_b})
    own = alice.post("/management/v1/role", json={"name": "b-team"})
    assert own.status_code == 201, own.text
    members = {"members": [{"role": foreign.json()["id"]}]}

    added = alice.post(f"/management/v1/role/{own.json()['id']}/members", json=members)
    granted = alice.post(
        "/management/v1/permissions/project/assignments",
        json={"writes": [{"type": "describe", "role": foreign.json()["id"]}], "deletes": []},
    )

    assert_error(added, 404, "NoSuchRoleException")
    assert_error(granted, 404, "NoSuchRoleException")
    mine = alice.post(f"/management/v1/role/{own.json()['id']}/members", json={"members": [{"user": "oidc~alice"}]})
    assert mine.status_code == 204, mine.text
