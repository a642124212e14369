"""Secrets key parsing and secret fingerprints (no database)."""

from __future__ import annotations

import base64

import pytest

from catalog_es.store.secrets import SecretsKeyError, SecretStore, generate_secrets_key, parse_secrets_key

KEY = bytes(range(32))
CREDENTIAL = {"type": "s3", "credential-type": "access-key", "access-key-id": "AKIA1", "secret-access-key": "shh"}


def test_parse_secrets_key_accepts_urlsafe_base64_with_or_without_padding():
    text = base64.urlsafe_b64encode(KEY).decode()
    assert parse_secrets_key(text) == KEY
    assert parse_secrets_key(text.rstrip("=") + "\n") == KEY


@pytest.mark.parametrize("text", ["", "not base64 at all!", base64.urlsafe_b64encode(b"short").decode()])
def test_parse_secrets_key_refuses_when_not_32_bytes_of_base64(text):
    with pytest.raises(SecretsKeyError, match="32 bytes"):
        parse_secrets_key(text)


def test_generate_secrets_key_produces_a_parsable_random_key():
    first, second = generate_secrets_key(), generate_secrets_key()
    assert len(parse_secrets_key(first)) == 32
    assert first != second


def test_fingerprint_is_stable_when_document_keys_are_reordered():
    store = SecretStore(KEY)
    reordered = dict(reversed(list(CREDENTIAL.items())))
    assert store.fingerprint(CREDENTIAL) == store.fingerprint(reordered)
    assert store.fingerprint(CREDENTIAL) == SecretStore(KEY).fingerprint(CREDENTIAL)
    assert len(store.fingerprint(CREDENTIAL)) == 32


def test_fingerprint_differs_when_secret_or_key_differs():
    store = SecretStore(KEY)
    assert store.fingerprint(CREDENTIAL) != store.fingerprint({**CREDENTIAL, "secret-access-key": "other"})
    assert store.fingerprint(CREDENTIAL) != SecretStore(bytes(32)).fingerprint(CREDENTIAL)
    assert "shh" not in store.fingerprint(CREDENTIAL)


def test_secret_store_refuses_when_key_has_wrong_length():
    with pytest.raises(SecretsKeyError):
        SecretStore(b"short")
