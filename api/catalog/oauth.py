"""POST /catalog/v1/oauth/tokens: the catalog's own OAuth2 token endpoint, for service principals.

The spec marks this endpoint deprecated, yet it is where pyiceberg and Iceberg's Java client go with
`credential=<client id>:<client secret>` (or `oauth2-server-uri` pointing here), so a catalog without an
identity provider needs it. Grants: `client_credentials` (the client id and secret in the form or in HTTP
Basic) and token exchange of one of our own live tokens (how the Java client refreshes). Answers the spec's
`OAuthTokenResponse` or `OAuthError` (`invalid_client` with 401, the rest with 400); never a token for a
revoked principal or a secret that was rotated away. The secret is checked against its scrypt hash off the
event loop; an unknown client id costs the same time as a wrong secret. Past a client id's or a peer's rate
(api/auth/token_limits.py) the answer is 429 with `Retry-After` and the OAuth error envelope, before any check.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import uuid
from typing import Final, Literal
from urllib.parse import parse_qs

import msgspec
from litestar import Request, Response, post
from litestar.datastructures import State

from api.auth.local_tokens import LocalTokens
from api.auth.oidc import TokenRejectedError
from api.auth.rules import anyone, requires
from api.container import services
from api.idempotency import NOT_IDEMPOTENT
from catalog_es.principal_secrets import dummy_verify, verify_secret
from catalog_es.store.principal_secrets import current_hash
from projections.permissions import queries as permissions_queries

_CLIENT_CREDENTIALS: Final = "client_credentials"
_TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"  # noqa: S105 - a grant name
_ACCESS_TOKEN_TYPE: Final = "urn:ietf:params:oauth:token-type:access_token"  # noqa: S105 - a type name
_SCOPES: Final = frozenset({"catalog"})  # what Iceberg's clients ask for by default
_MAX_FORM_BYTES: Final = 8192

OAuthErrorCode = Literal[
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
]


class OAuthTokenResponse(msgspec.Struct, omit_defaults=True):
    access_token: str
    token_type: str
    expires_in: int
    issued_token_type: str = _ACCESS_TOKEN_TYPE
    scope: str | None = None


class OAuthError(msgspec.Struct, omit_defaults=True):
    error: OAuthErrorCode
    error_description: str | None = None


class _RefusedError(Exception):
    def __init__(self, code: OAuthErrorCode, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code, self.description, self.retry_after = code, description, retry_after


def _error(code: OAuthErrorCode, description: str, retry_after: int | None = None) -> Response[bytes]:
    status = 401 if code == "invalid_client" else 400 if retry_after is None else 429
    headers = {"cache-control": "no-store"}
    if status == 401:
        headers["www-authenticate"] = 'Basic realm="catalog-es"'
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    body = msgspec.json.encode(OAuthError(error=code, error_description=description))
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def _form(body: bytes) -> dict[str, str]:
    """Raises: _RefusedError for a body that is not a small form with each field once."""
    if len(body) > _MAX_FORM_BYTES:
        raise _RefusedError("invalid_request", "The request is too large")
    try:
        fields = parse_qs(body.decode("ascii"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError):
        raise _RefusedError("invalid_request", "The body must be application/x-www-form-urlencoded") from None
    if any(len(values) > 1 for values in fields.values()):
        raise _RefusedError("invalid_request", "Each parameter may appear once")
    return {name: values[0] for name, values in fields.items()}


def _basic(header: str | None) -> tuple[str, str] | None:
    """Client id and secret from `Authorization: Basic` (RFC 6749 2.3.1), if sent that way."""
    if not header or not header.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise _RefusedError("invalid_client", "Malformed Basic credentials") from None
    client_id, _, secret = decoded.partition(":")
    return client_id, secret


def _scope(requested: str | None) -> str:
    scopes = set((requested or "catalog").split())
    unknown = scopes - _SCOPES
    if unknown:
        raise _RefusedError(
            "invalid_scope", f"Unknown scope: {' '.join(sorted(unknown))}; this catalog offers 'catalog'"
        )
    return "catalog"


async def _client_credentials(
    form: dict[str, str], basic: tuple[str, str] | None, peer: str, state: State
) -> tuple[str, str]:
    """Raises: _RefusedError (invalid_client for an unknown, revoked or wrong client, all alike; 429 past the
    client id's or the peer's rate, before the secret is checked)."""
    client_id_text, secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
    if not client_id_text or not secret:
        raise _RefusedError("invalid_request", "client_id and client_secret are required")
    wait = _tokens(state).limiter.admit(client_id_text[:64], peer)
    if wait:
        raise _RefusedError("invalid_request", f"Too many token requests: retry in {wait} s", retry_after=wait)
    refused = _RefusedError("invalid_client", "Unknown client or wrong secret")
    try:
        client_id = uuid.UUID(client_id_text)
    except ValueError:
        await asyncio.to_thread(dummy_verify, secret)
        raise refused from None
    built = services(state)
    async with built.ctx.store.connection() as conn:
        held = await current_hash(conn, client_id)
        row = await permissions_queries.service_principal(conn, client_id)
    if held is None or row is None or row.revoked_at is not None:
        await asyncio.to_thread(dummy_verify, secret)
        raise refused
    key_version, stored = held
    if not await asyncio.to_thread(verify_secret, secret, stored):
        raise refused
    tokens = _tokens(state)
    tokens.revocations.record(client_id, key_version)
    return tokens.issue(client_id, row.user_id, row.name, key_version, _scope(form.get("scope"))), "catalog"


def _exchange(form: dict[str, str], state: State) -> tuple[str, str]:
    """A fresh token for the principal of a live token of ours (the Java client's refresh)."""
    subject = form.get("subject_token")
    if not subject or form.get("subject_token_type", _ACCESS_TOKEN_TYPE) != _ACCESS_TOKEN_TYPE:
        raise _RefusedError("invalid_request", "subject_token (an access token of this catalog) is required")
    tokens = _tokens(state)
    try:
        claims = tokens.claims(subject)
    except TokenRejectedError as exc:
        raise _RefusedError("invalid_grant", str(exc)) from None
    client_id = uuid.UUID(str(claims["client_id"]))
    scope = _scope(form.get("scope"))
    return tokens.issue(client_id, str(claims["sub"]), str(claims.get("name", "")), int(claims["ver"]), scope), scope


def _tokens(state: State) -> LocalTokens:
    tokens = services(state).local_tokens
    if tokens is None:
        raise _RefusedError("unauthorized_client", "This catalog issues no tokens: service principals are not enabled")
    return tokens


async def _grant(form: dict[str, str], authorization: str | None, peer: str, state: State) -> tuple[str, str]:
    _tokens(state)  # refuses before any lookup when service principals are off
    grant = form.get("grant_type")
    if grant == _CLIENT_CREDENTIALS:
        return await _client_credentials(form, _basic(authorization), peer, state)
    if grant == _TOKEN_EXCHANGE:
        return _exchange(form, state)
    raise _RefusedError("unsupported_grant_type", f"Unsupported grant_type {grant!r}: use client_credentials")


@post("/oauth/tokens", status_code=200, opt={**requires(anyone), NOT_IDEMPOTENT: True}, operation_id="getToken")
async def get_token(request: Request[object, object, State], state: State) -> Response[bytes]:
    """Deprecated in the spec; the client-credentials flow of Iceberg's clients."""
    try:
        form = _form(await request.body())
        peer = request.client.host if request.client else ""
        token, scope = await _grant(form, request.headers.get("authorization"), peer, state)
    except _RefusedError as refused:
        return _error(refused.code, refused.description, refused.retry_after)
    response = OAuthTokenResponse(
        access_token=token,
        token_type="bearer",  # noqa: S106 - the token type's name
        expires_in=_tokens(state).lifetime_seconds,
        scope=scope,
    )
    return Response(
        msgspec.json.encode(response),
        media_type="application/json",
        headers={"cache-control": "no-store", "pragma": "no-cache"},
    )
