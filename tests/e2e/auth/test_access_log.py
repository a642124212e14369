"""Refused attempts are audit records: who, what, when, the answer and why, with the request id; in their own
append-only table (never catalog events), readable by server admins through the API and the CLI."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.e2e.auth.openid_provider import AUDIENCE, OpenIdProvider
from tests.e2e.auth.test_authorization import SCHEMA, _granted, _id, _management, _pyiceberg
from tests.e2e.conftest import RunningCatalog, run_cli, start_catalog, stop_catalog
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e


def _as(idp: OpenIdProvider, client: str, request_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {idp.token(client)}", "x-request-id": request_id}


def test_denied_and_hidden_attempts_are_recorded_outside_the_event_log(
    authz_catalog: RunningCatalog, idp: OpenIdProvider
):
    admin = _pyiceberg(authz_catalog, idp, "admin")
    admin.create_namespace("sales")
    admin.create_table("sales.orders", schema=SCHEMA)
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    table_path = f"{authz_catalog.catalog_uri}/v1/{warehouse}/namespaces/sales/tables/orders"

    hidden = httpx.get(table_path, headers=_as(idp, "alice", "req-alice-1"))
    assert_error(hidden, 404, "NoSuchWarehouseException")
    management = _management(authz_catalog, idp, "admin")
    _granted(management, f"warehouse/{warehouse}", writes=[{"type": "describe", "user": "oidc~alice"}])
    denied = httpx.delete(table_path, headers=_as(idp, "alice", "req-alice-2"))
    assert_error(denied, 403, "ForbiddenException")
    assert httpx.get(table_path, headers=_as(idp, "alice", "req-alice-3")).status_code == 200  # allowed: no record

    records = management.get("/access-log", params={"actor": "oidc~alice"}).json()["entries"]
    summary = [(r["request-id"], r["decision"], r["status"], r["method"], r["operation"]) for r in records]
    assert summary == [
        ("req-alice-1", "hidden", 404, "GET", "load_table"),
        ("req-alice-2", "denied", 403, "DELETE", "drop_table"),
    ]
    assert {r["path"] for r in records} == {table_path.removeprefix(authz_catalog.base_url)}
    assert "modify" in records[1]["reason"]

    # Only server admins and operators read it; a refusal to read it is itself recorded.
    refused = httpx.get(f"{authz_catalog.base_url}/management/v1/access-log", headers=_as(idp, "bob", "req-bob-1"))
    assert_error(refused, 403, "ForbiddenException")

    dsn = authz_catalog.env["CATALOG_ES__PG_DSN"]
    with psycopg.connect(dsn) as conn:
        in_log = conn.execute(
            "SELECT type FROM catalog_events WHERE extensions->>'requestid' LIKE 'req-%%' ORDER BY global_position"
        ).fetchall()
        # Only the users' provisioning on their first request: refusals are not catalog events (replay skips them).
        assert in_log == [("io.catalog-es.user.created.v1",), ("io.catalog-es.user.created.v1",)]
        with pytest.raises(psycopg.errors.RestrictViolation):
            conn.execute("UPDATE access_audit_log SET decision = 'allowed'")
    with psycopg.connect(dsn) as conn, pytest.raises(psycopg.errors.RestrictViolation):
        conn.execute("DELETE FROM access_audit_log")

    listed = run_cli(["audit", "access-log", "--json"], authz_catalog.env, timeout=120, check=True)
    lines = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["actor"], r["request-id"]) for r in lines if r["actor"] != "oidc~admin"] == [
        ("oidc~alice", "req-alice-1"),
        ("oidc~alice", "req-alice-2"),
        ("oidc~bob", "req-bob-1"),
    ]


@pytest.fixture
def auditing_reads(pg_dsn: str, tmp_path: Path, idp: OpenIdProvider) -> Iterator[RunningCatalog]:
    """Builtin authorization with `audit_reads` on, bootstrapped by `admin`."""
    env = {
        **os.environ,
        "CATALOG_ES__PG_DSN": pg_dsn,
        "CATALOG_ES__NATS__ENABLED": "false",
        "CATALOG_ES__OPENID_PROVIDER_URI": idp.issuer,
        "CATALOG_ES__OPENID_AUDIENCE": AUDIENCE,
        "CATALOG_ES__AUTHZ__BACKEND": "builtin",
        "CATALOG_ES__AUDIT_READS": "true",
    }
    running = start_catalog(tmp_path / "data", env)
    bootstrapped = httpx.post(
        f"{running.base_url}/management/v1/bootstrap",
        json={"accept-terms-of-use": True},
        headers={"Authorization": f"Bearer {idp.token('admin')}"},
        timeout=30,
    )
    assert bootstrapped.status_code == 204, bootstrapped.text
    yield running
    stop_catalog(running)


def test_allowed_reads_are_recorded_when_the_setting_asks_for_it(auditing_reads: RunningCatalog, idp: OpenIdProvider):
    admin = _pyiceberg(auditing_reads, idp, "admin")
    admin.create_namespace("sales")
    admin.create_table("sales.orders", schema=SCHEMA)
    warehouse = _id(auditing_reads, "SELECT id FROM warehouses")
    table_path = f"{auditing_reads.catalog_uri}/v1/{warehouse}/namespaces/sales/tables/orders"
    assert httpx.get(table_path, headers=_as(idp, "admin", "req-read-1")).status_code == 200
    records = _management(auditing_reads, idp, "admin").get("/access-log", params={"actor": "oidc~admin"}).json()
    reads = [(r["request-id"], r["decision"], r["status"], r["operation"]) for r in records["entries"]]
    assert ("req-read-1", "allowed", 200, "load_table") in reads
    assert all(operation in ("load_table", "load_view") for *_, operation in reads)
