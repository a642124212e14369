"""The access audit log: refused attempts (403, and 404 for what the caller may not see), append-only, outside the
event log so that replay never reads them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from catalog_es.store.database import Connection
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
)
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
    """Append on an autocommit connection: the refusal is kept whatever becomes of the request."""
    await conn.execute(
        "INSERT INTO access_audit_log (time, actor, request_id, decision, status, method, path, operation, reason)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            record.time,
            record.actor,
            record.request_id,
            record.decision,
            record.status,
            record.method,
            record.path,
            record.operation,
            record.reason,
        ),
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
