"""Service-principal client secrets: generated once, kept only as a salted scrypt hash, compared in constant time.

A secret is 32 random bytes (URL-safe base64): guessing is hopeless, yet a leaked hash table must still not
be a list of working credentials, so the hash is a slow KDF (the standard library's scrypt) rather than a
plain digest. Parameters travel inside the stored string so they can be raised without breaking old hashes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Final

_SECRET_BYTES: Final = 32
_SALT_BYTES: Final = 16
_N, _R, _P = 2**14, 8, 1  # ~0.1 s and 16 MiB per hash on this machine's cores: a token request, not a hot path
_MAX_MEMORY: Final = 64 * 1024 * 1024
_SCHEME: Final = "scrypt"


def new_secret() -> str:
    """A fresh client secret, shown to its creator once and never stored."""
    return secrets.token_urlsafe(_SECRET_BYTES)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(secret: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, maxmem=_MAX_MEMORY, dklen=32)


def hash_secret(secret: str) -> str:
    """`scrypt$<n>$<r>$<p>$<salt>$<hash>`: what the secrets table keeps instead of the secret."""
    salt = secrets.token_bytes(_SALT_BYTES)
    return f"{_SCHEME}${_N}${_R}${_P}${_b64(salt)}${_b64(_scrypt(secret, salt, _N, _R, _P))}"


def verify_secret(secret: str, stored: str) -> bool:
    """Whether `secret` hashes to `stored`; a malformed stored value never matches."""
    try:
        scheme, n, r, p, salt, expected = stored.split("$")
        if scheme != _SCHEME:
            return False
        actual = _scrypt(secret, _unb64(salt), int(n), int(r), int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, _unb64(expected))


def dummy_verify(secret: str) -> None:
    """Spend what a real check spends, so an unknown client id is not told apart by the answer's speed."""
    _scrypt(secret, b"\0" * _SALT_BYTES, _N, _R, _P)
