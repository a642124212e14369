"""The encrypted secret store on a real PostgreSQL, and the generated key file."""

from __future__ import annotations

import asyncio
import contextlib
import stat
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from catalog_es.store.database import open_pool
from catalog_es.store.secrets import (
    KEY_FILE_NAME,
    SecretNotFoundError,
    SecretRef,
    SecretsKeyError,
    SecretStore,
    generate_secrets_key,
    load_secrets_key,
    parse_secrets_key,
)

CREDENTIAL = {"type": "s3", "credential-type": "access-key", "access-key-id": "AKIA1", "secret-access-key": "shh"}
KEY = bytes(range(32))


def _ciphertexts(dsn: str) -> list[bytes]:
    with psycopg.connect(dsn) as conn:
        return [bytes(row[0]) for row in conn.execute("SELECT ciphertext FROM storage_secrets")]


def test_secret_store_round_trips_a_document_when_read_with_the_same_key(migrated_dsn):
    async def scenario() -> tuple[SecretRef, dict[str, str]]:
        pool = await open_pool(migrated_dsn, min_size=1, max_size=1)
        try:
            async with pool.connection() as conn:
                ref = await SecretStore(KEY).put(conn, CREDENTIAL)
                return ref, await SecretStore(KEY).get(conn, ref.id)
        finally:
            await pool.close()

    ref, document = asyncio.run(scenario())
    assert document == CREDENTIAL
    assert ref.fingerprint == SecretStore(KEY).fingerprint(CREDENTIAL)
    (ciphertext,) = _ciphertexts(migrated_dsn)
    assert b"shh" not in ciphertext
    assert b"AKIA1" not in ciphertext


def test_secret_store_put_is_rolled_back_with_the_callers_transaction(migrated_dsn):
    async def scenario() -> None:
        pool = await open_pool(migrated_dsn, min_size=1, max_size=1)
        try:
            async with pool.connection() as conn:
                with contextlib.suppress(RuntimeError):
                    async with conn.transaction():
                        await SecretStore(KEY).put(conn, CREDENTIAL)
                        raise RuntimeError("the event append failed")
        finally:
            await pool.close()

    asyncio.run(scenario())
    assert _ciphertexts(migrated_dsn) == []


def test_secret_store_get_fails_when_key_differs_or_secret_is_deleted(migrated_dsn):
    async def scenario() -> None:
        pool = await open_pool(migrated_dsn, min_size=1, max_size=1)
        try:
            async with pool.connection() as conn:
                store = SecretStore(KEY)
                ref = await store.put(conn, CREDENTIAL)
                with pytest.raises(SecretsKeyError, match="cannot be decrypted"):
                    await SecretStore(bytes(32)).get(conn, ref.id)
                await store.delete(conn, ref.id)
                await store.delete(conn, ref.id)  # deleting twice is not an error
                with pytest.raises(SecretNotFoundError):
                    await store.get(conn, ref.id)
                with pytest.raises(SecretNotFoundError):
                    await store.get(conn, uuid.uuid4())
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_secret_store_refuses_a_ciphertext_moved_to_another_row(migrated_dsn):
    async def scenario() -> None:
        pool = await open_pool(migrated_dsn, min_size=1, max_size=1)
        try:
            async with pool.connection() as conn:
                first = await SecretStore(KEY).put(conn, CREDENTIAL)
                second = await SecretStore(KEY).put(conn, {**CREDENTIAL, "secret-access-key": "other"})
                await conn.execute(
                    "UPDATE storage_secrets SET ciphertext = (SELECT ciphertext FROM storage_secrets WHERE id = %s)"
                    " WHERE id = %s",
                    (first.id, second.id),
                )
                with pytest.raises(SecretsKeyError):
                    await SecretStore(KEY).get(conn, second.id)
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_load_secrets_key_creates_a_0600_key_file_once_when_none_is_configured(tmp_path: Path):
    data_dir = tmp_path / "data"
    key = load_secrets_key(None, data_dir)
    path = data_dir / KEY_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(key) == 32
    assert load_secrets_key(None, data_dir) == key
    assert [entry.name for entry in data_dir.iterdir()] == [KEY_FILE_NAME]  # no temporary files left


def test_load_secrets_key_agrees_on_one_key_when_started_concurrently(tmp_path: Path):
    with ThreadPoolExecutor(max_workers=8) as pool:
        keys = set(pool.map(lambda _: load_secrets_key(None, tmp_path / "data"), range(16)))
    assert len(keys) == 1


def test_load_secrets_key_prefers_the_configured_key(tmp_path: Path):
    configured = generate_secrets_key()
    assert load_secrets_key(configured, tmp_path) == parse_secrets_key(configured)
    assert not (tmp_path / KEY_FILE_NAME).exists()


def test_load_secrets_key_fails_when_neither_key_nor_data_dir_is_given():
    with pytest.raises(SecretsKeyError, match="CATALOG_ES__SECRETS_KEY"):
        load_secrets_key(None, None)
