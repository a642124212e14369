"""The service-principal secret hashes: a table outside the event log, written in the event's own transaction.

The log says that a secret exists and its version (`service-principal.*` events); only this table says what
it hashes to. A revocation deletes the row, so nothing of a revoked principal's secret remains anywhere.
"""

from __future__ import annotations

import uuid

from catalog_es.store.database import Connection
from catalog_es.store.migrations import Migration

PRINCIPAL_SECRET_MIGRATIONS = (
    Migration(
        "0004_service_principal_secrets",
        """
        -- Salted scrypt hashes of service-principal client secrets; never the secret itself.
        CREATE TABLE IF NOT EXISTS service_principal_secrets (
            client_id uuid PRIMARY KEY,
            key_version integer NOT NULL,
            secret_hash text NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
)


async def put_hash(conn: Connection, client_id: uuid.UUID, key_version: int, secret_hash: str) -> None:
    """Record (or replace, on rotation) the principal's current secret hash."""
    await conn.execute(
        "INSERT INTO service_principal_secrets (client_id, key_version, secret_hash) VALUES (%s, %s, %s)"
        " ON CONFLICT (client_id) DO UPDATE SET key_version = excluded.key_version,"
        " secret_hash = excluded.secret_hash, updated_at = now()",
        (client_id, key_version, secret_hash),
    )


async def current_hash(conn: Connection, client_id: uuid.UUID) -> tuple[int, str] | None:
    """(key version, hash) of the principal's secret; None when it has none (unknown or revoked)."""
    cursor = await conn.execute(
        "SELECT key_version, secret_hash FROM service_principal_secrets WHERE client_id = %s", (client_id,)
    )
    row = await cursor.fetchone()
    return (int(row[0]), str(row[1])) if row else None


async def delete_hash(conn: Connection, client_id: uuid.UUID) -> None:
    await conn.execute("DELETE FROM service_principal_secrets WHERE client_id = %s", (client_id,))
