"""The check refusing a malformed or out-of-limits JSON request body with 400 before any guard or handler.

Every request body of both APIs is JSON but the OAuth2 token endpoint's (form-encoded, as OAuth2 says).
msgspec raises RecursionError for a very deep document and
UnicodeDecodeError for invalid UTF-8, neither of them a `DecodeError`, so without this check both
surfaced as 500s (from the guard's decoding or the framework's). The body read here is the one the
framework caches, so the handler does not read it again from the socket; the document decoded here is the one
`Request.json()` then answers, so neither the guard (`read_body`) nor the handler's `data` decodes it again.
It runs in the request layer (api/request_layer.py), which answers a refusal through the `send` it observes (counted,
logged, with the request id), after authentication.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ClientException
from litestar.types import Receive, Scope, Send
from litestar.utils.scope.state import ScopeState

from api.auth.local_tokens import TOKEN_PATH
from api.errors import error_body
from api.wire_limits import BodyLimitError, check_body

_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def decode_checked(body: bytes) -> Any:
    """The body as JSON, within the wire limits.

    Raises:
        ClientException: (400) the body is not JSON, not UTF-8, or outside the limits of api/wire_limits.py.
    """
    try:
        document = msgspec.json.decode(body)
    except RecursionError:
        raise ClientException("The body nests too deeply") from None
    except UnicodeDecodeError as exc:
        raise ClientException(f"The body is not valid UTF-8 (byte {exc.start})") from None
    except msgspec.DecodeError as exc:
        raise ClientException(f"The body is not valid JSON: {exc}") from None
    try:
        check_body(document)
    except BodyLimitError as exc:
        raise ClientException(str(exc)) from None
    return document


async def body_refusal(scope: Scope, receive: Receive) -> str | None:
    """Why the body of this POST, PUT, PATCH or DELETE is refused (None: it has none, or it is fine).

    The body read is the one the framework caches, and the document decoded is kept where `Request.json()` finds
    it: the same generic decode as Litestar's (a type decoder never applies to a document decoded without a type),
    done once.
    """
    if scope.get("method") not in _WITH_BODY or scope["path"] == TOKEN_PATH:
        return None
    body = await Request[Any, Any, Any](scope, receive).body()
    if not body:
        return None
    try:
        document = decode_checked(body)
    except ClientException as exc:
        return exc.detail
    ScopeState.from_scope(scope).json = document
    return None


async def refuse(send: Send, message: str) -> None:
    """400 in the Iceberg error envelope."""
    body = error_body(400, "BadRequestException", message)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
