"""Encrypted secret store for storage credentials: kept outside the event log, referenced by id and fingerprint.

The secrets key is 32 random bytes written as URL-safe base64 (`CATALOG_ES__SECRETS_KEY`, or the generated
`<data dir>/secrets.key` in embedded mode). Documents are sealed with AES-256-GCM, the secret's id bound as
associated data so a ciphertext cannot be moved to another row; fingerprints are HMAC-SHA256 under a key
derived from the secrets key, so equal documents share a fingerprint that reveals nothing about them.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import secrets
import uuid
from pathlib import Path
from typing import Final

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from catalog_es.clock import IdSource, RandomIds
from catalog_es.events import Json
from catalog_es.store.database import Connection
from catalog_es.store.migrations import Migration

KEY_FILE_NAME: Final = "secrets.key"
_KEY_BYTES: Final = 32
_NONCE_BYTES: Final = 12
_FINGERPRINT_HEX: Final = 32

SECRETS_MIGRATIONS = (
    Migration(
        "0003_storage_secrets",
        """
        -- Storage credentials, encrypted; events refer to a row by id and fingerprint only.
        CREATE TABLE IF NOT EXISTS storage_secrets (
            id uuid PRIMARY KEY,
            ciphertext bytea NOT NULL,
            fingerprint text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
)


class SecretsKeyError(Exception):
    """No usable secrets key: a malformed configured key, or no key and no data directory."""


class SecretNotFoundError(Exception):
    """No secret by that id (deleted, or never stored)."""


class SecretRef(msgspec.Struct, frozen=True, rename="kebab"):
    """What events carry instead of a secret."""

    id: uuid.UUID
    fingerprint: str


def generate_secrets_key() -> str:
    """A new key in the configured format (URL-safe base64 of 32 random bytes)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(_KEY_BYTES)).decode("ascii")


def parse_secrets_key(text: str) -> bytes:
    """Raises: SecretsKeyError when the text is not URL-safe base64 of exactly 32 bytes."""
    stripped = text.strip()
    try:
        key = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    except (binascii.Error, ValueError) as exc:
        raise SecretsKeyError("The secrets key must be URL-safe base64 of 32 bytes") from exc
    if len(key) != _KEY_BYTES:
        raise SecretsKeyError(f"The secrets key must be URL-safe base64 of 32 bytes, it decodes to {len(key)} bytes")
    return key


def load_secrets_key(configured: str | None, data_dir: Path | None) -> bytes:
    """The configured key, else the data directory's key file (created once, mode 0600, atomically).

    Raises:
        SecretsKeyError: the configured key or key file is malformed, or neither a key nor a data dir is given.
    """
    if configured:
        return parse_secrets_key(configured)
    if data_dir is None:
        raise SecretsKeyError("No secrets key: set CATALOG_ES__SECRETS_KEY (URL-safe base64 of 32 bytes)")
    path = data_dir / KEY_FILE_NAME
    if not path.exists():
        _create_key_file(path)
    return parse_secrets_key(path.read_text(encoding="ascii"))


def _create_key_file(path: Path) -> None:
    """Write a temporary file with mode 0600 and link it into place: concurrent starts agree on one key."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as stream:
            stream.write(generate_secrets_key() + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        with contextlib.suppress(FileExistsError):  # another process won: use its key
            os.link(temporary, path)
    finally:
        temporary.unlink()


class SecretStore:
    """Puts, gets and deletes encrypted JSON documents in `storage_secrets`, on the caller's connection."""

    def __init__(self, key: bytes, ids: IdSource | None = None) -> None:
        if len(key) != _KEY_BYTES:
            raise SecretsKeyError(f"The secrets key must be {_KEY_BYTES} bytes")
        self._key = key
        self._aead = AESGCM(_derive(key, b"catalog-es storage secrets: encryption"))
        self._fingerprint_key = _derive(key, b"catalog-es storage secrets: fingerprint")
        self._ids = ids or RandomIds()

    def sealer(self, purpose: str) -> Sealer:
        """AES-256-GCM under a key derived from the secrets key for `purpose` (independent of this store's)."""
        return Sealer(_derive(self._key, f"catalog-es {purpose}: encryption".encode()))

    def signing_key(self, purpose: str) -> bytes:
        """A key derived from the secrets key for `purpose` (e.g. signing the catalog's own tokens)."""
        return _derive(self._key, f"catalog-es {purpose}: signing".encode())

    def fingerprint(self, document: Json) -> str:
        """A keyed hash of the document (keys sorted): stable for equal documents, opaque without the key."""
        canonical = msgspec.json.encode(document, order="sorted")
        return hmac.new(self._fingerprint_key, canonical, hashlib.sha256).hexdigest()[:_FINGERPRINT_HEX]

    async def put(self, conn: Connection, document: Json) -> SecretRef:
        """Store a new secret (inside the caller's transaction, if any)."""
        secret_id = self._ids.new_id()
        nonce = secrets.token_bytes(_NONCE_BYTES)
        ciphertext = nonce + self._aead.encrypt(nonce, msgspec.json.encode(document), secret_id.bytes)
        ref = SecretRef(id=secret_id, fingerprint=self.fingerprint(document))
        await conn.execute(
            "INSERT INTO storage_secrets (id, ciphertext, fingerprint) VALUES (%s, %s, %s)",
            (ref.id, ciphertext, ref.fingerprint),
        )
        return ref

    async def get(self, conn: Connection, secret_id: uuid.UUID) -> Json:
        """Raises: SecretNotFoundError; SecretsKeyError when the row was sealed with another key."""
        cursor = await conn.execute("SELECT ciphertext FROM storage_secrets WHERE id = %s", (secret_id,))
        row = await cursor.fetchone()
        if row is None:
            raise SecretNotFoundError(f"Secret {secret_id} does not exist")
        sealed = bytes(row[0])
        try:
            plaintext = self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], secret_id.bytes)
        except InvalidTag as exc:
            raise SecretsKeyError(f"Secret {secret_id} cannot be decrypted with the configured secrets key") from exc
        document: Json = msgspec.json.decode(plaintext)
        return document

    async def delete(self, conn: Connection, secret_id: uuid.UUID) -> None:
        """Remove a secret; deleting one that is gone already is not an error."""
        await conn.execute("DELETE FROM storage_secrets WHERE id = %s", (secret_id,))


class Sealer:
    """Seals bytes other than storage secrets (e.g. stored idempotent responses) with a purpose's own key."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def seal(self, plaintext: bytes, bound_to: bytes) -> bytes:
        """`bound_to`: associated data (the row's identity): the ciphertext opens only with the same bytes."""
        nonce = secrets.token_bytes(_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, bound_to)

    def open(self, sealed: bytes, bound_to: bytes) -> bytes:
        """Raises: SecretsKeyError when sealed with another key or for other associated data."""
        try:
            return self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], bound_to)
        except InvalidTag as exc:
            raise SecretsKeyError("A sealed value cannot be opened with the configured secrets key") from exc


def _derive(key: bytes, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=_KEY_BYTES, salt=None, info=purpose).derive(key)
