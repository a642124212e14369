"""GET /management/v1/access-log: refused attempts from the access audit log, oldest first, paged by record id."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.params import FromQuery, QueryParameter

from api.auth.rules import requires, server_operator
from api.management.audit_params import parse_time
from catalog_es.errors import BadRequestError
from catalog_es.store.access_log import AccessRecord, read_access_log
from catalog_es.store.database import Connection


class AccessLogPage(msgspec.Struct, rename="kebab"):
    entries: list[AccessRecord]
    next_page_token: str | None = None


@get("/access-log", opt=requires(server_operator))  # refused attempts of every user
async def access_log(
    conn: NamedDependency[Connection],
    actor: FromQuery[str | None] = None,
    since: FromQuery[str | None] = None,
    until: FromQuery[str | None] = None,
    page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
    page_size: Annotated[int, QueryParameter(name="pageSize", ge=1, le=1000)] = 100,
) -> AccessLogPage:
    """Server admins and operators only (the guard's rule); `pageToken` is the last record id of the page before."""
    if page_token is not None and not (page_token.isascii() and page_token.isdigit() and len(page_token) <= 18):
        raise BadRequestError(f"Invalid pageToken {page_token!r}")
    entries = await read_access_log(
        conn,
        after=int(page_token or 0),
        limit=page_size,
        actor=actor,
        since=parse_time(since, "since") if since else None,
        until=parse_time(until, "until") if until else None,
    )
    token = str(entries[-1].id) if len(entries) == page_size else None
    return AccessLogPage(entries=entries, next_page_token=token)
