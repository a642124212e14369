"""Idempotency-Key records: claim a key, finalise it with the response, replay that response on retry."""

from __future__ import annotations

from datetime import timedelta

import msgspec

from catalog_es.database import Connection
from catalog_es.migrations import Migration, packaged_sql

IDEMPOTENCY_MIGRATIONS = (Migration("0002_idempotency_keys", packaged_sql("catalog_es", "idempotency.sql")),)


class StoredResponse(msgspec.Struct, frozen=True):
    status: int
    content_type: str | None
    body: bytes


class Claimed(msgspec.Struct, frozen=True):
    """The key is ours: run the request, then finalise or release it."""


class InProgress(msgspec.Struct, frozen=True):
    """Another request with this key is running."""


Claim = Claimed | InProgress | StoredResponse


async def claim(conn: Connection, key: str, fingerprint: str, lifetime: timedelta, stale_after: timedelta) -> Claim:
    """Claim a new (or expired, or abandoned in-progress) key; otherwise say why not, or what to replay."""
    cursor = await conn.execute(
        "INSERT INTO idempotency_keys (key, fingerprint, state) VALUES (%s, %s, 'in-progress')"
        " ON CONFLICT (key, fingerprint) DO UPDATE SET state = 'in-progress',"
        " status = NULL, content_type = NULL, body = NULL, created_at = now()"
        " WHERE idempotency_keys.created_at < now() - %s"
        " OR (idempotency_keys.state = 'in-progress' AND idempotency_keys.created_at < now() - %s)"
        " RETURNING key",
        (key, fingerprint, lifetime, stale_after),
    )
    if await cursor.fetchone() is not None:
        return Claimed()
    cursor = await conn.execute(
        "SELECT state, status, content_type, body FROM idempotency_keys WHERE key = %s AND fingerprint = %s",
        (key, fingerprint),
    )
    row = await cursor.fetchone()
    if row is None:  # removed in between: treat as in progress; the client retries
        return InProgress()
    state, status, content_type, body = row
    if state != "done":
        return InProgress()
    return StoredResponse(status=status, content_type=content_type, body=bytes(body or b""))


async def finalise(conn: Connection, key: str, fingerprint: str, response: StoredResponse) -> None:
    await conn.execute(
        "UPDATE idempotency_keys SET state = 'done', status = %s, content_type = %s, body = %s"
        " WHERE key = %s AND fingerprint = %s",
        (response.status, response.content_type, response.body, key, fingerprint),
    )


async def release(conn: Connection, key: str, fingerprint: str) -> None:
    """Forget a claim whose outcome must not be replayed (a 5xx, or a request that never finished)."""
    await conn.execute(
        "DELETE FROM idempotency_keys WHERE key = %s AND fingerprint = %s AND state = 'in-progress'", (key, fingerprint)
    )
