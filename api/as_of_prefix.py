"""As-of warehouse prefixes: `<warehouse-id>@<log position>` names a read-only view of the catalog as it was then.

`/config?warehouse=<name>@<ISO time or position>` resolves a time to the last position at or before it, so the
prefix an engine gets is fixed: every later request sees the same catalog.
"""

from __future__ import annotations

from catalog_es.clock import parse_instant
from catalog_es.errors import BadRequestError
from catalog_es.store.database import Connection
from projections.audit.as_of import position_at


def _position(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise BadRequestError(f"Invalid as-of position {text!r}: expected <warehouse>@<log position>")
    return int(text)


def split_prefix(prefix: str) -> tuple[str, int | None]:
    """The warehouse id part and the as-of position (None: the current catalog). Raises: BadRequestError."""
    base, at, suffix = prefix.partition("@")
    return (base, _position(suffix)) if at else (prefix, None)


def split_warehouse_value(value: str) -> tuple[str, str | None]:
    """`/config?warehouse=`: the name and the as-of part after the last `@` (a time or a position), if any."""
    name, at, suffix = value.rpartition("@")
    return (name, suffix) if at and name else (value, None)


async def resolve_as_of(conn: Connection, suffix: str) -> int:
    """A position as given, or the last position at or before a time. Raises: BadRequestError."""
    if suffix.isascii() and suffix.isdigit():
        return _position(suffix)
    try:
        at = parse_instant(suffix)
    except ValueError:
        raise BadRequestError(f"Invalid as-of time {suffix!r}: expected ISO-8601 or a log position") from None
    return await position_at(conn, at)


# POSTs that read: metrics reports, and scan planning (a plan of a past snapshot is as read-only as loading it).
_READ_POSTS = ("/metrics", "/plan", "/tasks")


def is_read(endpoint: str) -> bool:
    """An advertised endpoint (`GET /v1/...`) served under an as-of prefix: reads, and metrics reports (kept
    outside the log; engines send them after scans)."""
    return endpoint.startswith(("GET ", "HEAD ")) or endpoint.endswith(_READ_POSTS)


def is_write(method: str, path: str) -> bool:
    """Refused under an as-of prefix: everything but reads and metrics reports."""
    return method not in ("GET", "HEAD") and not path.endswith(_READ_POSTS)
