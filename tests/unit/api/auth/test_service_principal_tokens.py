"""Service-principal secrets and tokens (issue 32), without a server: the scrypt hash, the revocation list's
rules (a revocation is final, a floor only rises, nothing is trusted before the first load), and tokens
refused for their signature, key, expiry, revocation and rotation."""

from __future__ import annotations

import asyncio
import time
import uuid

import jwt
import pytest

from api.auth.local_tokens import LocalTokens, RevocationList, is_local_token
from api.auth.oidc import TokenRejectedError
from api.imports.catalog import source_label
from catalog_es.principal_secrets import hash_secret, new_secret, verify_secret

CLIENT = uuid.UUID("00000000-0000-0000-0000-0000000000aa")


def test_secrets_are_hashed_with_a_salt_and_verified() -> None:
    secret = new_secret()
    stored = hash_secret(secret)
    assert stored.startswith("scrypt$")
    assert secret not in stored
    assert stored != hash_secret(secret)  # salted
    assert verify_secret(secret, stored)
    assert not verify_secret(secret + "x", stored)
    assert not verify_secret(secret, "scrypt$garbage")


def test_the_revocation_list_refuses_until_loaded_and_only_tightens() -> None:
    revocations = RevocationList()
    assert not revocations.admits(CLIENT, 1)  # not following the log yet: fail closed
    revocations.replace({CLIENT: 1})
    assert revocations.admits(CLIENT, 1)
    assert not revocations.admits(uuid.uuid4(), 1)  # unknown principal
    revocations.record(CLIENT, 2)  # rotated
    assert not revocations.admits(CLIENT, 1)
    revocations.record(CLIENT, 1)  # a stale read cannot lower the floor
    assert not revocations.admits(CLIENT, 1)
    revocations.record(CLIENT, None)  # revoked
    revocations.record(CLIENT, 3)  # ... for good
    assert not revocations.admits(CLIENT, 3)
    revocations.following = False  # the follower lost the log
    revocations.replace({CLIENT: 1})
    assert revocations.admits(CLIENT, 1)


def _tokens(key: bytes = b"k" * 32, **kwargs: object) -> LocalTokens:
    revocations = RevocationList()
    revocations.replace({CLIENT: 1})
    return LocalTokens(key, revocations, lifetime_seconds=60, **kwargs)  # type: ignore[arg-type]


def test_tokens_are_refused_when_forged_expired_or_revoked() -> None:
    tokens = _tokens()
    token = tokens.issue(CLIENT, f"principal~{CLIENT}", "p", 1, "catalog")
    assert is_local_token(token)
    assert (asyncio.run(tokens.verify(token))).user_id == f"principal~{CLIENT}"
    other_key = _tokens(b"o" * 32).issue(CLIENT, f"principal~{CLIENT}", "p", 1, "catalog")
    with pytest.raises(TokenRejectedError, match="unknown catalog key"):
        asyncio.run(tokens.verify(other_key))
    header = jwt.get_unverified_header(token)
    forged = jwt.encode({"sub": "principal~x"}, b"x" * 32, algorithm="HS256", headers={"kid": header["kid"]})
    with pytest.raises(TokenRejectedError):
        asyncio.run(tokens.verify(forged))
    expired = _tokens(clock=lambda: time.time() - 3600).issue(CLIENT, "u", "p", 1, "catalog")
    with pytest.raises(TokenRejectedError, match="expired"):
        asyncio.run(tokens.verify(expired))
    tokens.revocations.record(CLIENT, 2)
    with pytest.raises(TokenRejectedError, match="revoked"):
        asyncio.run(tokens.verify(token))


def test_an_import_source_label_never_holds_a_credential() -> None:
    label = source_label({"type": "sql", "uri": "postgresql://user:pw@db.example:5432/cat?password=pw"})
    assert label == "sql:postgresql://db.example:5432/cat"
    assert source_label({"type": "sql", "uri": "sqlite:////tmp/c.db"}) == "sql:sqlite:////tmp/c.db"
    assert source_label({"type": "glue", "glue.secret-access-key": "s"}) == "glue"
    assert source_label({"uri": "http://x"}, "chosen") == "chosen"
