"""Authentication against a real OpenID provider: 401s in the Iceberg envelope, pyiceberg with client
credentials, users provisioned on first use, the user id as the actor of events, signing-key rotation."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import psycopg
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import UnauthorizedError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.e2e.auth.conftest import CLIENTS
from tests.e2e.auth.openid_provider import OpenIdProvider, new_signing_key
from tests.e2e.conftest import RunningCatalog, free_port

pytestmark = pytest.mark.e2e


@pytest.fixture
def idp(tmp_path: Path) -> Iterator[OpenIdProvider]:
    """A provider of each test's own: the rotation test changes its signing keys."""
    provider = OpenIdProvider(tmp_path, free_port(), CLIENTS)
    provider.start()
    yield provider
    provider.stop()


def _pyiceberg(catalog: RunningCatalog, idp: OpenIdProvider, client: str):
    secret, _ = idp.clients[client]
    return load_catalog(
        client,
        type="rest",
        uri=catalog.catalog_uri,
        warehouse="demo",
        credential=f"{client}:{secret}",
        **{"oauth2-server-uri": idp.token_endpoint},
    )


def _assert_401(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    error = response.json()["error"]
    assert error["type"] == "NotAuthorizedException"
    assert error["code"] == 401
    assert error["message"]


def test_requests_without_a_valid_token_get_401_when_authentication_is_on(
    secured_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    base = secured_catalog.base_url
    assert httpx.get(f"{base}/health").status_code == 200
    _assert_401(httpx.get(f"{base}/catalog/v1/config", params={"warehouse": "demo"}))
    _assert_401(httpx.get(f"{base}/catalog/v1/config", headers={"Authorization": "Bearer None"}))
    _assert_401(httpx.get(f"{base}/management/v1/whoami", headers={"Authorization": "Bearer not-a-jwt"}))
    real = idp.token("alice")
    forged_key = new_signing_key("key-1")  # same key id, another key: the signature cannot verify
    claims = jwt.decode(real, options={"verify_signature": False})
    forged = jwt.encode(
        claims,
        jwt.algorithms.RSAAlgorithm.from_jwk(forged_key),
        algorithm="RS256",
        headers={"kid": "key-1"},
    )
    _assert_401(httpx.get(f"{base}/management/v1/whoami", headers={"Authorization": f"Bearer {forged}"}))
    wrong_audience = jwt.encode(
        {**claims, "aud": "someone-else"},
        jwt.algorithms.RSAAlgorithm.from_jwk(idp.keys[0]),
        algorithm="RS256",
        headers={"kid": "key-1"},
    )
    _assert_401(httpx.get(f"{base}/management/v1/whoami", headers={"Authorization": f"Bearer {wrong_audience}"}))
    expired = jwt.encode(
        {**claims, "exp": int(time.time()) - 120},
        jwt.algorithms.RSAAlgorithm.from_jwk(idp.keys[0]),
        algorithm="RS256",
        headers={"kid": "key-1"},
    )
    _assert_401(httpx.get(f"{base}/management/v1/whoami", headers={"Authorization": f"Bearer {expired}"}))
    ok = httpx.get(f"{base}/management/v1/whoami", headers={"Authorization": f"Bearer {real}"})
    assert ok.status_code == 200, ok.text


def test_pyiceberg_is_refused_when_it_has_no_credential(secured_catalog: RunningCatalog) -> None:
    with pytest.raises(UnauthorizedError):
        load_catalog("anon", type="rest", uri=secured_catalog.catalog_uri, warehouse="demo")


def test_pyiceberg_with_client_credentials_works_and_events_carry_the_user_when_authenticated(
    secured_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    catalog = _pyiceberg(secured_catalog, idp, "alice")
    catalog.create_namespace("sales")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("sales.orders", schema=schema)
    assert catalog.load_table("sales.orders").metadata.table_uuid == table.metadata.table_uuid

    with psycopg.connect(secured_catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        actors = conn.execute(
            "SELECT type, extensions->>'actor' FROM catalog_events WHERE type LIKE %s ORDER BY global_position",
            ("io.catalog-es.%",),
        ).fetchall()
    by_type = dict(actors)
    assert by_type["io.catalog-es.namespace.created.v1"] == "oidc~alice"
    assert by_type["io.catalog-es.table.created.v1"] == "oidc~alice"
    assert by_type["io.catalog-es.user.created.v1"] == "oidc~alice"


def test_users_are_provisioned_on_first_request_and_listed_when_authenticated(
    secured_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    base = secured_catalog.base_url
    bob = {"Authorization": f"Bearer {idp.token('bob')}"}
    config = httpx.get(f"{base}/catalog/v1/config", params={"warehouse": "demo"}, headers=bob)
    assert config.status_code == 200, config.text
    me = httpx.get(f"{base}/management/v1/whoami", headers=bob).json()
    assert me["id"] == "oidc~bob"
    assert me["last-updated-with"] == "config-call-creation"
    assert me["user-type"] == "application"
    updated = httpx.post(
        f"{base}/management/v1/user",
        json={"name": "Bob Builder", "email": "bob@example.com", "update-if-exists": True},
        headers=bob,
    )
    assert updated.status_code == 201, updated.text
    assert updated.json()["name"] == "Bob Builder"
    assert updated.json()["last-updated-with"] == "update-endpoint"
    listed = httpx.get(f"{base}/management/v1/user", headers=bob).json()
    assert [user["id"] for user in listed["users"]] == ["oidc~bob"]
    assert httpx.get(f"{base}/management/v1/user/oidc~bob", headers=bob).json()["email"] == "bob@example.com"
    assert httpx.delete(f"{base}/management/v1/user/oidc~bob", headers=bob).status_code == 204
    missing = httpx.get(
        f"{base}/management/v1/user/oidc~bob", headers={"Authorization": f"Bearer {idp.token('alice')}"}
    )
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "NoSuchUserException"


def test_user_with_a_slash_in_its_id_is_read_and_deleted_when_the_slash_is_percent_encoded(
    secured_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    base = f"{secured_catalog.base_url}/management/v1/user"
    bob = {"Authorization": f"Bearer {idp.token('bob')}"}
    created = httpx.post(base, json={"id": "oidc~team/ci", "name": "CI"}, headers=bob)
    assert created.status_code == 201, created.text

    read = httpx.get(f"{base}/oidc~team%2Fci", headers=bob)
    deleted = httpx.delete(f"{base}/oidc~team%2Fci", headers=bob)

    assert read.status_code == 200, read.text
    assert (read.json()["id"], read.json()["name"]) == ("oidc~team/ci", "CI")
    assert deleted.status_code == 204, deleted.text
    assert httpx.get(f"{base}/oidc~team%2Fci", headers=bob).status_code == 404


def test_tokens_signed_with_a_rotated_key_are_accepted_when_the_provider_rotates(
    secured_catalog: RunningCatalog, idp: OpenIdProvider
) -> None:
    base = secured_catalog.base_url
    before = httpx.get(f"{base}/management/v1/whoami", headers={"Authorization": f"Bearer {idp.token('alice')}"})
    assert before.status_code == 200, before.text
    time.sleep(10.5)  # unknown key ids trigger a JWKS refetch at most every 10 s
    idp.rotate_keys()
    after = httpx.get(f"{base}/management/v1/whoami", headers={"Authorization": f"Bearer {idp.token('alice')}"})
    assert after.status_code == 200, after.text
