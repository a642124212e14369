"""Service principals without an identity provider (issue 32): `serve --secure`, pyiceberg with `credential=`,
grants, revocation and rotation (also seen by a server that did not make the change), tampered and expired
tokens, and no secret anywhere in the database."""

from __future__ import annotations

import base64
import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pyarrow as pa
import pytest
from msgspec import Struct
from psycopg import sql
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import ForbiddenError, NoSuchTableError, OAuthError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from api.auth.local_tokens import LocalTokens, RevocationList
from api.auth.setup import TOKEN_SIGNING_PURPOSE
from catalog_es.store.secrets import SecretStore, generate_secrets_key, parse_secrets_key
from tests.e2e.auth.conftest import bootstrapped, catalog_server
from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog, eventually, run_cli, start_catalog, stop_catalog
from tests.e2e.shared_server import new_warehouse, shared_catalog

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
ROWS = pa.table({"id": pa.array([1, 2, 3], type=pa.int64())})
SECURE = "--secure"
_CREDENTIAL = re.compile(r"credential=\"?([0-9a-f-]{36}:[A-Za-z0-9_-]+)\"?")


class SecureServer(Struct):
    """A `serve --secure` server, its secrets key and the first admin's credential (printed at its start)."""

    running: RunningCatalog
    secrets_key: str
    admin_credential: str


class Secured:
    """A test's view of the module's secure server: the test's own warehouse on it (pyiceberg's default)."""

    def __init__(self, server: SecureServer, warehouse: str) -> None:
        self.running, self.secrets_key = server.running, server.secrets_key
        self.admin_credential, self.warehouse = server.admin_credential, warehouse

    @property
    def dsn(self) -> str:
        return self.running.env["CATALOG_ES__PG_DSN"]

    def token(self, credential: str) -> httpx.Response:
        return _token(self.running, credential)

    def bearer(self, credential: str) -> str:
        return _bearer(self.running, credential)

    def management(self, credential: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.bearer(credential or self.admin_credential)}"}
        return httpx.Client(base_url=f"{self.running.base_url}/management/v1", headers=headers, timeout=30)

    def pyiceberg(self, credential: str) -> Catalog:
        uri = self.running.catalog_uri
        return load_catalog(uri, type="rest", uri=uri, warehouse=self.warehouse, credential=credential, scope="catalog")

    def load(self, token: str) -> httpx.Response:
        """An authenticated request any caller may make (who am I), to see whether the token is accepted."""
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.get(f"{self.running.base_url}/management/v1/whoami", headers=headers)


def _token(running: RunningCatalog, credential: str) -> httpx.Response:
    client_id, secret = credential.split(":", 1)
    form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret, "scope": "catalog"}
    return httpx.post(f"{running.catalog_uri}/v1/oauth/tokens", data=form, timeout=30)


def _bearer(running: RunningCatalog, credential: str) -> str:
    response = _token(running, credential)
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


def _secure_settings(secrets_key: str, **settings: str) -> dict[str, str]:
    return {"CATALOG_ES__SECRETS_KEY": secrets_key, "CATALOG_ES__NATS__ENABLED": "false", **settings}


def _start(tmp_path: Path, pg_dsn: str, secrets_key: str, **settings: str) -> RunningCatalog:
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn, **_secure_settings(secrets_key, **settings)}
    return start_catalog(tmp_path / "data", env, args=[SECURE])


def _printed_credential(running: RunningCatalog) -> str:
    assert running.log_path is not None
    log = eventually(lambda: running.log_path.read_text() if "credential=" in running.log_path.read_text() else "")
    found = _CREDENTIAL.search(log)
    assert found, log
    return found.group(1)


@pytest.fixture(scope="module")
def secure_server(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureServer]:
    """One `serve --secure` server (default settings, a database of its own) for the tests that need no other:
    each works in a warehouse of its own and on principals of its own, and the server's first admin (made by
    its start, before any test) is the same for all."""
    secrets_key = generate_secrets_key()
    data_dir = tmp_path_factory.mktemp("secure") / "data"
    file_root = tmp_path_factory.getbasetemp()
    with shared_catalog(pg_admin_dsn, data_dir, file_root, _secure_settings(secrets_key), [SECURE]) as running:
        yield SecureServer(running, secrets_key, _printed_credential(running))


@pytest.fixture
def secured(secure_server: SecureServer, tmp_path: Path) -> Secured:
    """The module's secure server, with a new warehouse of this test's own that the first admin created."""
    running = secure_server.running
    headers = {"Authorization": f"Bearer {_bearer(running, secure_server.admin_credential)}"}
    return Secured(secure_server, new_warehouse(running, tmp_path / "warehouse", headers))


def _create_principal(secured: Secured, name: str) -> dict[str, str]:
    with secured.management() as admin:
        response = admin.post("/service-principal", json={"name": name})
    assert response.status_code == 201, response.text
    assert response.headers["cache-control"] == "no-store"
    return dict(response.json())


def _seed(secured: Secured) -> Catalog:
    admin = secured.pyiceberg(secured.admin_credential)
    admin.create_namespace("sales")
    admin.create_table("sales.orders", schema=SCHEMA).append(ROWS)
    admin.create_table("sales.secret_plans", schema=SCHEMA)
    return admin


def _grant_select(secured: Secured, user_id: str, table: str) -> None:
    with psycopg.connect(secured.dsn) as conn:
        row = conn.execute(
            "SELECT t.id, t.warehouse_id FROM tables t JOIN warehouses w ON w.id = t.warehouse_id"
            " WHERE t.name = %s AND w.name = %s",
            (table, secured.warehouse),
        ).fetchone()
    assert row is not None
    with secured.management() as admin:
        body = {"writes": [{"type": "select", "user": user_id}], "deletes": []}
        response = admin.post(f"/permissions/warehouse/{row[1]}/table/{row[0]}/assignments", json=body)
    assert response.status_code == 204, response.text


def test_secure_serve_makes_the_first_admin_and_refuses_anonymous_callers(secured: Secured) -> None:
    assert secured.running.log_path is not None
    banner = secured.running.log_path.read_text()
    assert "oauth2-server-uri=" in banner
    assert "spark.sql.catalog.catalog_es.credential=" in banner
    anonymous = httpx.get(f"{secured.running.catalog_uri}/v1/config", params={"warehouse": "demo"})
    assert anonymous.status_code == 401
    with pytest.raises(Exception, match=r"401|Authentication required"):
        load_catalog("anonymous", type="rest", uri=secured.running.catalog_uri, warehouse="demo")
    # The server is bootstrapped by the admin principal: nobody can claim it through the API.
    with secured.management() as admin:
        info = admin.get("/info").json()
        assert info["bootstrapped"] is True
        assert admin.post("/bootstrap", json={"accept-terms-of-use": True}).status_code == 409
    admin_catalog = _seed(secured)
    assert admin_catalog.load_table("sales.orders").scan().to_arrow().num_rows == 3


def test_a_principal_is_authorised_by_its_grants(secured: Secured) -> None:
    _seed(secured)
    reader = _create_principal(secured, "nightly-report")
    assert reader["user-id"] == f"principal~{reader['client-id']}"
    _grant_select(secured, reader["user-id"], "orders")
    catalog = secured.pyiceberg(reader["credential"])
    assert catalog.load_table("sales.orders").scan().to_arrow().equals(ROWS)  # allowed: select on the table
    with pytest.raises(NoSuchTableError):  # no grant: hidden, exactly like a missing table
        catalog.load_table("sales.secret_plans")
    with pytest.raises(ForbiddenError):  # sees the namespace (through its table), may not create in it
        catalog.create_table("sales.mine", schema=SCHEMA)
    assert [name for _, name in catalog.list_tables("sales")] == ["orders"]
    with secured.management(reader["credential"]) as not_admin:  # only server admins manage principals
        assert not_admin.post("/service-principal", json={"name": "x"}).status_code == 403
        assert not_admin.get("/service-principal").status_code == 403


def test_revocation_refuses_new_tokens_and_existing_ones(secured: Secured) -> None:
    _seed(secured)
    reader = _create_principal(secured, "etl")
    _grant_select(secured, reader["user-id"], "orders")
    token = secured.bearer(reader["credential"])
    assert secured.load(token).status_code == 200
    with secured.management() as admin:
        assert admin.post(f"/service-principal/{reader['client-id']}/revoke").status_code == 204
        assert admin.post(f"/service-principal/{reader['client-id']}/revoke").status_code == 404
        listed = admin.get("/service-principal").json()["service-principals"]
        assert reader["client-id"] not in {p["client-id"] for p in listed}
    refused = secured.load(token)  # the very next request with the token issued before
    assert refused.status_code == 401
    assert "revoked" in refused.text
    again = secured.token(reader["credential"])
    assert again.status_code == 401
    assert again.json()["error"] == "invalid_client"
    with pytest.raises(OAuthError):
        secured.pyiceberg(reader["credential"])


def test_a_revocation_by_another_process_reaches_the_server_through_the_log(secured: Secured) -> None:
    """The CLI revokes (another process): the server's revocation list follows the log, no database read per
    request; the bound is the follower's delay (a LISTEN/NOTIFY round trip), checked here at 5 s."""
    reader = _create_principal(secured, "cli-revoked")
    token = secured.bearer(reader["credential"])
    assert secured.load(token).status_code == 200
    env = {**secured.running.env}
    done = run_cli(["principal", "revoke", reader["client-id"]], env, timeout=120)
    assert done.returncode == 0, done.stderr
    started = time.monotonic()
    assert eventually(lambda: secured.load(token).status_code == 401, timeout=5.0)
    print(f"revocation by another process in force after {time.monotonic() - started:.3f} s")


def test_rotation_replaces_the_secret_and_its_tokens(secured: Secured) -> None:
    principal = _create_principal(secured, "rotating")
    old_token = secured.bearer(principal["credential"])
    with secured.management() as admin:
        rotated = admin.post(f"/service-principal/{principal['client-id']}/rotate-secret")
        assert rotated.status_code == 200, rotated.text
        body = rotated.json()
        assert body["key-version"] == 2
        assert body["client-id"] == principal["client-id"]
        assert admin.get(f"/service-principal/{principal['client-id']}").json()["key-version"] == 2
    assert secured.token(principal["credential"]).status_code == 401  # the old secret
    assert secured.load(old_token).status_code == 401  # a token of the old secret
    assert secured.load(secured.bearer(body["credential"])).status_code == 200


def test_the_cli_creates_a_principal_that_pyiceberg_uses(secured: Secured) -> None:
    env = {**secured.running.env}
    done = run_cli(["principal", "create", "from-cli", "--server-admin", "--json"], env, timeout=120)
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    catalog = eventually(lambda: _loads(secured, created["credential"]), timeout=5.0)
    catalog.create_namespace("from_cli")
    listed = run_cli(["principal", "list"], env, timeout=120)
    assert created["client-id"] in listed.stdout
    assert created["client-secret"] not in listed.stdout


def _loads(secured: Secured, credential: str) -> Catalog | None:
    try:
        return secured.pyiceberg(credential)
    except Exception:  # a server whose list has not caught up yet
        return None


def _segments(token: str) -> list[str]:
    return token.split(".")


def _b64(document: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")


def test_tampered_forged_and_expired_tokens_are_refused(secured: Secured) -> None:
    principal = _create_principal(secured, "victim")
    token = secured.bearer(principal["credential"])
    header, payload, signature = _segments(token)
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    admin_id = secured.admin_credential.split(":", 1)[0]
    claims |= {"sub": f"principal~{admin_id}", "client_id": admin_id}
    tampered = f"{header}.{_b64(claims)}.{signature}"
    assert secured.load(tampered).status_code == 401
    unsigned = f"{_b64({'alg': 'none', 'kid': json.loads(base64.urlsafe_b64decode(header + '=='))['kid']})}"
    assert secured.load(f"{unsigned}.{_b64(claims)}.").status_code == 401
    # Signed with another secrets key's signing key (another server's token): refused.
    other = LocalTokens(
        SecretStore(parse_secrets_key(generate_secrets_key())).signing_key(TOKEN_SIGNING_PURPOSE),
        RevocationList(),
        lifetime_seconds=600,
    )
    forged = other.issue(uuid.UUID(admin_id), f"principal~{admin_id}", "admin", 1, "catalog")
    assert secured.load(forged).status_code == 401
    # Signed with the right key, expired: the server checks the expiry itself.
    key = SecretStore(parse_secrets_key(secured.secrets_key)).signing_key(TOKEN_SIGNING_PURPOSE)
    past = LocalTokens(key, RevocationList(), lifetime_seconds=60, clock=lambda: time.time() - 3600)
    expired = past.issue(uuid.UUID(principal["client-id"]), principal["user-id"], "victim", 1, "catalog")
    response = secured.load(expired)
    assert response.status_code == 401
    assert "expired" in response.text.lower()
    fresh = LocalTokens(key, RevocationList(), lifetime_seconds=60)  # the control: the same key, live
    assert (
        secured.load(
            fresh.issue(uuid.UUID(principal["client-id"]), principal["user-id"], "v", 1, "catalog")
        ).status_code
        == 200
    )


def test_the_token_endpoint_answers_oauth_errors(secured: Secured) -> None:
    url = f"{secured.running.catalog_uri}/v1/oauth/tokens"
    client_id, secret = secured.admin_credential.split(":", 1)
    cases = [
        ({"grant_type": "password", "username": "a"}, 400, "unsupported_grant_type"),
        ({"grant_type": "client_credentials"}, 400, "invalid_request"),
        ({"grant_type": "client_credentials", "client_id": client_id, "client_secret": "wrong"}, 401, "invalid_client"),
        ({"grant_type": "client_credentials", "client_id": "nobody", "client_secret": secret}, 401, "invalid_client"),
        (
            {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret, "scope": "all"},
            400,
            "invalid_scope",
        ),
    ]
    for form, status, error in cases:
        response = httpx.post(url, data=form)
        assert (response.status_code, response.json()["error"]) == (status, error), form
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    ok = httpx.post(url, data={"grant_type": "client_credentials"}, headers={"Authorization": f"Basic {basic}"})
    assert ok.status_code == 200
    assert ok.json()["token_type"] == "bearer"
    assert ok.json()["expires_in"] == 900
    exchanged = httpx.post(
        url,
        data={
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": ok.json()["access_token"],
            "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
        },
    )
    assert exchanged.status_code == 200
    assert secured.load(exchanged.json()["access_token"]).status_code == 200


def test_the_token_endpoint_answers_429_when_a_client_id_or_a_peer_asks_too_often(pg_dsn: str, tmp_path: Path) -> None:
    """Guessing a secret (and the scrypt check each guess costs) is bounded per client id and per peer."""
    limits = {
        "CATALOG_ES__SERVICE_PRINCIPALS__TOKEN_REQUESTS_PER_MINUTE": "3",
        "CATALOG_ES__SERVICE_PRINCIPALS__TOKEN_REQUESTS_PER_MINUTE_PER_PEER": "5",
    }
    running = _start(tmp_path, pg_dsn, generate_secrets_key(), **limits)
    try:
        url = f"{running.catalog_uri}/v1/oauth/tokens"
        client_id, secret = _printed_credential(running).split(":", 1)

        def ask(client: str, guess: str) -> httpx.Response:
            form = {"grant_type": "client_credentials", "client_id": client, "client_secret": guess}
            return httpx.post(url, data=form, timeout=30)

        assert [ask(client_id, f"guess-{i}").status_code for i in range(3)] == [401, 401, 401]
        limited = ask(client_id, secret)  # even the right secret waits: nothing is checked past the rate
        assert limited.status_code == 429, limited.text
        assert limited.json()["error"] == "invalid_request"
        assert "Too many token requests" in limited.json()["error_description"]
        assert 1 <= int(limited.headers["retry-after"]) <= 20  # one request back every 20 s at 3 a minute
        assert [ask(str(uuid.uuid4()), "x").status_code for _ in range(3)] == [401, 401, 429]  # the peer's 5th
        exchange = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": "not-a-token",
        }
        assert httpx.post(url, data=exchange, timeout=30).status_code == 400  # no secret to check: not limited
    finally:
        stop_catalog(running)


def test_no_secret_in_the_log_or_any_table(secured: Secured) -> None:
    principal = _create_principal(secured, "leak-check")
    with secured.management() as admin:
        rotated = admin.post(f"/service-principal/{principal['client-id']}/rotate-secret").json()
    secrets = [secured.admin_credential.split(":", 1)[1], principal["client-secret"], rotated["client-secret"]]
    dump = _dump(secured.dsn)
    assert principal["client-id"] in dump  # the dump does hold the principal (the control)
    for secret in secrets:
        assert secret not in dump
    with psycopg.connect(secured.dsn) as conn:
        events = conn.execute("SELECT type, data::text FROM catalog_events WHERE type LIKE '%service-principal%'")
        rows = events.fetchall()
    # the module's other tests share the database: this test's principal's own events, secret-free like all
    assert {row[0] for row in rows if principal["client-id"] in row[1]} >= {
        "io.catalog-es.service-principal.created.v1",
        "io.catalog-es.service-principal.secret-rotated.v1",
    }
    assert all("scrypt" not in row[1] for row in rows)
    assert all("hash" not in row[1] for row in rows)


def _dump(dsn: str) -> str:
    """Every row of every table, as text (what a data dump holds)."""
    parts: list[str] = []
    with psycopg.connect(dsn) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
            " WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        for schema, table in tables:
            query = sql.SQL("SELECT t::text FROM {}.{} t").format(sql.Identifier(schema), sql.Identifier(table))
            parts.extend(str(row[0]) for row in conn.execute(query))
    assert len(tables) > 10
    return "\n".join(parts)


def test_principals_work_beside_an_openid_provider(pg_dsn: str, tmp_path: Path, idp: OpenIdProvider) -> None:
    """Both kinds of token on one server: the provider's users and the catalog's own principals."""
    running = bootstrapped(
        catalog_server(
            pg_dsn,
            tmp_path,
            idp,
            "builtin",
            CATALOG_ES__SERVICE_PRINCIPALS__ENABLED="true",
            CATALOG_ES__SECRETS_KEY=generate_secrets_key(),
        ),
        idp,
    )
    try:
        management = f"{running.base_url}/management/v1"
        admin = {"Authorization": f"Bearer {idp.token('admin')}"}
        created = httpx.post(f"{management}/service-principal", json={"name": "beside-oidc"}, headers=admin)
        assert created.status_code == 201, created.text
        token = httpx.post(
            f"{running.catalog_uri}/v1/oauth/tokens",
            data={
                "grant_type": "client_credentials",
                "client_id": created.json()["client-id"],
                "client_secret": created.json()["client-secret"],
            },
        ).json()["access_token"]
        as_principal = httpx.get(f"{management}/whoami", headers={"Authorization": f"Bearer {token}"})
        assert as_principal.json()["id"] == created.json()["user-id"]
        as_alice = httpx.get(f"{management}/whoami", headers={"Authorization": f"Bearer {idp.token('alice')}"})
        assert as_alice.json()["id"] == "oidc~alice"
        assert httpx.get(f"{management}/whoami", headers={"Authorization": "Bearer not-a-token"}).status_code == 401
    finally:
        stop_catalog(running)
