"""The Idempotency-Key middleware (spec 1.11): a retried mutation gets the original response back.

Final 2xx and 4xx responses are stored and replayed for the key's lifetime; 5xx responses are never
stored. Records are per key and request (method + path), so a key reused for another operation (a
client error under the spec) runs as a request of its own rather than replaying a stranger's answer.
A second request while the first still runs gets 409. The response is recorded just before its
last byte is sent (not inside the request's transaction): if the process dies in between, the key is released
once its claim is older than `STALE_AFTER`, and a retry then runs again, meeting the already-committed
state (e.g. 409 AlreadyExists for a create).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_body
from catalog_es import idempotency
from catalog_es.database import Pool

HEADER = b"idempotency-key"
STALE_AFTER = timedelta(minutes=2)
_MUTATIONS = {"POST", "DELETE"}


def iso_duration(lifetime: timedelta) -> str:
    """`PT30M`-style ISO-8601 duration, as `/config` advertises it."""
    return (
        f"PT{int(lifetime.total_seconds())}S"
        if lifetime.total_seconds() % 60
        else f"PT{int(lifetime.total_seconds() // 60)}M"
    )


async def _send_stored(send: Send, response: idempotency.StoredResponse) -> None:
    headers = [(b"idempotent-replayed", b"true")]
    if response.content_type:
        headers.append((b"content-type", response.content_type.encode()))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body, "more_body": False})


async def _send_error(send: Send, status: int, type_name: str, message: str) -> None:
    body = error_body(status, type_name, message)
    await _send_stored(send, idempotency.StoredResponse(status=status, content_type="application/json", body=body))


class IdempotencyMiddleware(ASGIMiddleware):
    """Applies to POST and DELETE under /catalog/v1/ (not to metrics reports)."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, lifetime: timedelta) -> None:
        self.lifetime = lifetime

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        key = dict(scope["headers"]).get(HEADER, b"").decode()
        path = scope["path"]
        if (
            not key
            or scope.get("method") not in _MUTATIONS
            or not path.startswith("/catalog/v1/")
            or path.endswith("/metrics")
        ):
            await next_app(scope, receive, send)
            return
        try:
            uuid.UUID(key)
        except ValueError:
            await _send_error(send, 400, "BadRequestException", "Idempotency-Key must be a UUID (spec: UUIDv7)")
            return
        pool: Pool = scope["app"].state.ctx.store.pool
        fingerprint = f"{scope.get('method')} {path}"
        async with pool.connection() as conn:
            claim = await idempotency.claim(conn, key, fingerprint, self.lifetime, STALE_AFTER)
        match claim:
            case idempotency.StoredResponse():
                await _send_stored(send, claim)
            case idempotency.InProgress():
                await _send_error(
                    send, 409, "CommitFailedException", "A request with this Idempotency-Key is in progress"
                )
            case idempotency.Claimed():
                await self._run_and_record(scope, receive, send, next_app, pool, key, fingerprint)

    async def _run_and_record(
        self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp, pool: Pool, key: str, fingerprint: str
    ) -> None:
        status = 500
        content_type: str | None = None
        chunks: list[bytes] = []
        recorded = False

        async def record() -> None:
            nonlocal recorded
            recorded = True
            async with pool.connection() as conn:
                if status < 500:
                    stored = idempotency.StoredResponse(status=status, content_type=content_type, body=b"".join(chunks))
                    await idempotency.finalise(conn, key, fingerprint, stored)
                else:
                    await idempotency.release(conn, key, fingerprint)

        async def recording_send(message: Message) -> None:
            nonlocal status, content_type
            if message["type"] == "http.response.start":
                status = message["status"]
                content_type = dict(message.get("headers", [])).get(b"content-type", b"").decode() or None
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    await record()  # before the client sees the end: its retry must find the record
            await send(message)

        try:
            await next_app(scope, receive, recording_send)
        finally:
            if not recorded:
                await record()
