"""Idempotency-Key records: claim a key, finalise it with the response, replay that response on retry."""

from __future__ import annotations

from datetime import timedelta

import msgspec

from catalog_es.store.database import Connection
from catalog_es.store.migrations import Migration, packaged_sql
from catalog_es.store.secrets import Sealer, SecretsKeyError

IDEMPOTENCY_MIGRATIONS = (
    Migration("0002_idempotency_keys", packaged_sql("catalog_es.store", "idempotency.sql")),
    Migration("0004_idempotency_keys_per_caller", packaged_sql("catalog_es.store", "idempotency_scope.sql")),
)


class Scope(msgspec.Struct, frozen=True):
    """Whose record: the key, the caller (principal and project) and the operation (method + path).

    A key presented by another caller is another record: no one replays a response stored for someone else.
    """

    key: str
    principal: str
    project: str
    fingerprint: str

    def bound_to(self) -> bytes:
        """The record's identity as associated data: a sealed body cannot be moved to another record."""
        return msgspec.json.encode([self.key, self.principal, self.project, self.fingerprint])

    def params(self) -> tuple[str, str, str, str]:
        return (self.key, self.principal, self.project, self.fingerprint)


class StoredResponse(msgspec.Struct, frozen=True):
    status: int
    content_type: str | None
    body: bytes


class Claimed(msgspec.Struct, frozen=True):
    """The key is ours: run the request, then finalise or release it."""


class InProgress(msgspec.Struct, frozen=True):
    """Another request with this key is running."""


Claim = Claimed | InProgress | StoredResponse
_THIS = "key = %s AND principal = %s AND project = %s AND fingerprint = %s"


async def claim(
    conn: Connection, scope: Scope, lifetime: timedelta, stale_after: timedelta, sealer: Sealer | None
) -> Claim:
    """Claim a new (or expired, or abandoned in-progress) key; otherwise say why not, or what to replay.

    Raises: SecretsKeyError for a sealed body that the configured key does not open.
    """
    cursor = await conn.execute(
        "INSERT INTO idempotency_keys (key, principal, project, fingerprint, state)"
        " VALUES (%s, %s, %s, %s, 'in-progress')"
        " ON CONFLICT (key, principal, project, fingerprint) DO UPDATE SET state = 'in-progress',"
        " status = NULL, content_type = NULL, body = NULL, sealed = false, created_at = now()"
        " WHERE idempotency_keys.created_at < now() - %s"
        " OR (idempotency_keys.state = 'in-progress' AND idempotency_keys.created_at < now() - %s)"
        " RETURNING key",
        (*scope.params(), lifetime, stale_after),
    )
    if await cursor.fetchone() is not None:
        return Claimed()
    cursor = await conn.execute(
        f"SELECT state, status, content_type, body, sealed FROM idempotency_keys WHERE {_THIS}", scope.params()
    )
    row = await cursor.fetchone()
    if row is None:  # removed in between: treat as in progress; the client retries
        return InProgress()
    state, status, content_type, body, sealed = row
    if state != "done":
        return InProgress()
    stored = bytes(body or b"")
    if sealed:
        if sealer is None:
            raise SecretsKeyError("A stored idempotent response is sealed, but this server has no secrets key")
        stored = sealer.open(stored, scope.bound_to())
    return StoredResponse(status=status, content_type=content_type, body=stored)


async def finalise(conn: Connection, scope: Scope, response: StoredResponse, sealer: Sealer | None) -> None:
    """Record the response, sealed when the server has a secrets key.

    Without one the server keeps no credentials at all (commands/context.py refuses them), so a response
    cannot hold a secret and is stored as it is.
    """
    body = sealer.seal(response.body, scope.bound_to()) if sealer is not None else response.body
    await conn.execute(
        f"UPDATE idempotency_keys SET state = 'done', status = %s, content_type = %s, body = %s, sealed = %s"
        f" WHERE {_THIS}",
        (response.status, response.content_type, body, sealer is not None, *scope.params()),
    )


async def release(conn: Connection, scope: Scope) -> None:
    """Forget a claim whose outcome must not be replayed (a 5xx, or a request that never finished)."""
    await conn.execute(f"DELETE FROM idempotency_keys WHERE {_THIS} AND state = 'in-progress'", scope.params())
