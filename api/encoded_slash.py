"""Path segments decoded as Iceberg clients encode them: `%2F` kept inside a segment, `+` read as a space."""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

from litestar.types import ASGIApp, Receive, Scope, Send

# A private-use character stands in for an encoded slash between routing and the handlers.
ENCODED_SLASH = "\ue000"
_ENCODED_SLASH = re.compile(rb"%2f", re.IGNORECASE)
_NEEDS_DECODING = re.compile(rb"%2f|\+", re.IGNORECASE)


def decode_name(segment: str) -> str:
    """A name from a path segment, with its encoded slashes restored."""
    return segment.replace(ENCODED_SLASH, "/")


def keep_encoded_slashes(app: ASGIApp) -> ASGIApp:
    """Wrap the app so routing sees `%2F` as part of a segment, not as a separator, and `+` as a space.

    ASGI servers decode `scope["path"]` before the router sees it; the raw path still has `%2F`.
    The Java client (`RESTUtil.encodeString`, i.e. `URLEncoder`) form-encodes names, a space as `+`
    and a literal `+` as `%2B`; pyiceberg sends `%20` and `%2B`. Decoding `+` as a space therefore
    reads both, as Iceberg's reference server (`URLDecoder`) and Lakekeeper do.
    """

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path")
        if raw and _NEEDS_DECODING.search(raw):
            path = raw.split(b"?", 1)[0]
            parts = [unquote_plus(part.decode("latin-1"), encoding="utf-8") for part in _ENCODED_SLASH.split(path)]
            scope = {**scope, "path": ENCODED_SLASH.join(parts)}  # type: ignore[assignment]
        await app(scope, receive, send)

    return wrapped
