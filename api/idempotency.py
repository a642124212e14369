"""The Idempotency-Key middleware (spec 1.11): a retried mutation gets the original response back.

Final 2xx and 4xx responses are stored and replayed for the key's lifetime; 5xx responses are never
stored. Records are per key, caller (principal and `x-project-id`) and request (method + path): a key
reused for another operation (a client error under the spec), or presented by anyone else, runs as a
request of its own rather than replaying a stranger's answer. A replay passes the route's authorization
again first (a revoked grant stops it), and stored bodies are sealed under the secrets key (they can
hold table metadata and a warehouse's shared S3 credentials).
A second request while the first still runs gets 409. The response is recorded just before its
last byte is sent (not inside the request's transaction): if the process dies in between, the key is released
once its claim is older than `STALE_AFTER`, and a retry then runs again, meeting the already-committed
state (e.g. 409 AlreadyExists for a create).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from litestar import Request
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.auth.principal import request_principal
from api.auth.rules import authorize
from api.container import services
from api.errors import error_body
from catalog_es.store import idempotency
from catalog_es.store.database import Pool
from catalog_es.store.secrets import Sealer

HEADER = b"idempotency-key"
STALE_AFTER = timedelta(minutes=2)
_MUTATIONS = {"POST", "DELETE"}


async def _send_stored(send: Send, response: idempotency.StoredResponse) -> None:
    headers = [(b"idempotent-replayed", b"true")]
    if response.content_type:
        headers.append((b"content-type", response.content_type.encode()))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body, "more_body": False})


async def _send_error(send: Send, status: int, type_name: str, message: str) -> None:
    body = error_body(status, type_name, message)
    await _send_stored(send, idempotency.StoredResponse(status=status, content_type="application/json", body=body))


async def _authorize_replay(scope: Scope, receive: Receive) -> None:
    """The route's guard, as for the original request: a replay never answers what the caller may no longer do.

    Raises: the guard's not-found error or NotAuthorizedError (the exception handlers answer them).
    """
    if services(scope["app"].state).authorizer.enabled:
        await authorize(Request(scope, receive), scope["route_handler"])


NOT_IDEMPOTENT = "not_idempotent"
"""A route's `opt` key that takes it out of the middleware (metrics reports: fire-and-forget observations)."""


class IdempotencyMiddleware(ASGIMiddleware):
    """Applies to POST and DELETE on the routes of the router it is mounted on (the catalog API's)."""

    scopes = (ScopeType.HTTP,)
    exclude_opt_key = NOT_IDEMPOTENT

    def __init__(self, lifetime: timedelta) -> None:
        self.lifetime = lifetime

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        key = dict(scope["headers"]).get(HEADER, b"").decode() if scope.get("method") in _MUTATIONS else ""
        if not key:  # a read, or a mutation without a key: passed through
            await next_app(scope, receive, send)
            return
        try:
            uuid.UUID(key)
        except ValueError:
            await _send_error(send, 400, "BadRequestException", "Idempotency-Key must be a UUID (spec: UUIDv7)")
            return
        state = scope["app"].state
        pool: Pool = services(state).ctx.store.pool
        sealer: Sealer | None = services(state).idempotency_sealer
        headers = dict(scope["headers"])
        record = idempotency.Scope(
            key=key,
            principal=request_principal(scope).user_id,
            project=headers.get(b"x-project-id", b"").decode("latin-1"),
            fingerprint=f"{scope.get('method')} {scope['path']}",
        )
        async with pool.connection() as conn:
            claim = await idempotency.claim(conn, record, self.lifetime, STALE_AFTER, sealer)
        match claim:
            case idempotency.StoredResponse():
                await _authorize_replay(scope, receive)
                await _send_stored(send, claim)
            case idempotency.InProgress():
                await _send_error(
                    send, 409, "CommitFailedException", "A request with this Idempotency-Key is in progress"
                )
            case idempotency.Claimed():
                await self._run_and_record(scope, receive, send, next_app, pool, record, sealer)

    async def _run_and_record(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        next_app: ASGIApp,
        pool: Pool,
        record: idempotency.Scope,
        sealer: Sealer | None,
    ) -> None:
        status = 500
        content_type: str | None = None
        chunks: list[bytes] = []
        recorded = False

        async def finish() -> None:
            nonlocal recorded
            recorded = True
            async with pool.connection() as conn:
                if status < 500:
                    stored = idempotency.StoredResponse(status=status, content_type=content_type, body=b"".join(chunks))
                    await idempotency.finalise(conn, record, stored, sealer)
                else:
                    await idempotency.release(conn, record)

        async def recording_send(message: Message) -> None:
            nonlocal status, content_type
            if message["type"] == "http.response.start":
                status = message["status"]
                content_type = dict(message.get("headers", [])).get(b"content-type", b"").decode() or None
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    await finish()  # before the client sees the end: its retry must find the record
            await send(message)

        try:
            await next_app(scope, receive, recording_send)
        finally:
            if not recorded:
                await finish()
