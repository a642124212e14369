"""The access audit log: refused attempts (403, and 404 for what the caller may not see), append-only, outside the
event log so that replay never reads them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from catalog_es.store.database import Connection
from catalog_es.store.hash_chain import GENESIS, link
from catalog_es.store.migrations import Migration

ACCESS_LOG_MIGRATIONS = (
    Migration(
        "0801_access_audit_log",
        """
CREATE TABLE IF NOT EXISTS access_audit_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    time timestamptz NOT NULL,
    actor text NOT NULL,
    request_id text,
    decision text NOT NULL,
    status integer NOT NULL,
    method text NOT NULL,
    path text NOT NULL,
    operation text NOT NULL,
    reason text NOT NULL
);
CREATE INDEX IF NOT EXISTS access_audit_log_actor ON access_audit_log (actor, id);
CREATE INDEX IF NOT EXISTS access_audit_log_time ON access_audit_log (time);
CREATE OR REPLACE FUNCTION access_audit_log_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'access_audit_log is append-only: % rejected', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER access_audit_log_append_only BEFORE UPDATE OR DELETE ON access_audit_log
    FOR EACH ROW EXECUTE FUNCTION access_audit_log_reject_change();
CREATE TRIGGER access_audit_log_no_truncate BEFORE TRUNCATE ON access_audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION access_audit_log_reject_change();
""",
    ),
    # Each record's link in the hash chain (catalog_es.store.hash_chain); older records have none.
    Migration("0802_access_audit_log_chain", "ALTER TABLE access_audit_log ADD COLUMN IF NOT EXISTS digest bytea"),
)
_CHAIN_LOCK = 0x616363657373  # the advisory lock that puts records in chain order ("access")
_COLUMNS = "id, time, actor, request_id, decision, status, method, path, operation, reason"


class AccessRecord(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """One decision: who (the same actor as on events), what (method, path, route), when, the answer and why.

    `path` is the request path without its query string (which may carry tokens)."""

    id: int = 0
    time: datetime
    actor: str
    request_id: str | None
    decision: str
    status: int
    method: str
    path: str
    operation: str
    reason: str


async def record_access(conn: Connection, record: AccessRecord) -> None:
    """Append on an autocommit connection: the refusal is kept whatever becomes of the request.

    Records are chained in id order: an advisory lock orders the writers, each links to the one before."""
    time = record.time if record.time.tzinfo else record.time.replace(tzinfo=UTC)
    values = (
        time.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f"),
        record.actor,
        record.request_id,
        record.decision,
        record.status,
        record.method,
        record.path,
        record.operation,
        record.reason,
    )
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CHAIN_LOCK,))
        cursor = await conn.execute("SELECT digest FROM access_audit_log ORDER BY id DESC LIMIT 1")
        last = await cursor.fetchone()
        previous = bytes(last[0]) if last and last[0] is not None else GENESIS
        await conn.execute(
            "INSERT INTO access_audit_log"
            " (time, actor, request_id, decision, status, method, path, operation, reason, digest)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (time, *values[1:], link(previous, values)),
        )


async def read_access_log(
    conn: Connection,
    *,
    after: int = 0,
    limit: int = 100,
    actor: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[AccessRecord]:
    """Records after id `after`, oldest first, matching every given criterion."""
    clauses: list[str] = ["id > %s"]
    params: list[Any] = [after]
    for clause, value in (("actor = %s", actor), ("time >= %s", since), ("time < %s", until)):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    query = f"SELECT {_COLUMNS} FROM access_audit_log WHERE {' AND '.join(clauses)} ORDER BY id LIMIT %s"
    cursor = await conn.execute(query.encode(), [*params, limit])
    return [_record(row) for row in await cursor.fetchall()]


def _record(row: tuple[Any, ...]) -> AccessRecord:
    names = [name.strip() for name in _COLUMNS.split(",")]
    return AccessRecord(**dict(zip(names, row, strict=True)))
