"""Plan-ids that any replica can serve: what the plan is, and for whom, signed with the catalog's key.

A plan of a pinned snapshot never changes, so a replica that never saw the plan re-plans it from its id. The
signature makes the id unforgeable: a caller cannot mint an id for a table, request or policy it was not given.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import uuid

import msgspec

_PREFIX = "pi1."
_DIGEST_BYTES = 21  # HMAC-SHA256 cut to 168 bits (28 base64 characters): far beyond guessing


class PlanClaim(msgspec.Struct, frozen=True, array_like=True):
    """What a plan-id names: the warehouse and table, the canonical request with its snapshot pinned, the read
    policy's fingerprint ('' for none), the principal it was handed to, and a nonce (two plans of the same scan
    are two ids, so cancelling one leaves the other)."""

    warehouse_id: uuid.UUID
    table_id: uuid.UUID
    request: str
    policy: str
    principal: str
    nonce: str


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PlanIds:
    """Signs and reads plan-ids under one key (derived from the secrets key: the same on every replica)."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _digest(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()[:_DIGEST_BYTES]

    def issue(self, claim: PlanClaim) -> str:
        body = msgspec.json.encode(claim)
        return f"{_PREFIX}{_b64(body)}.{_b64(self._digest(body))}"

    def read(self, plan_id: str) -> PlanClaim | None:
        """The claim of an id this catalog signed; None for anything else (malformed, forged, another key's)."""
        if not plan_id.startswith(_PREFIX) or plan_id.count(".") != 2:
            return None
        body_text, _, digest_text = plan_id.removeprefix(_PREFIX).partition(".")
        try:
            body = _unb64(body_text)
        except (binascii.Error, ValueError):
            return None
        # Compared as text, and the body's encoding too: one plan has one id (no spare base64 bits to vary).
        if _b64(body) != body_text or not hmac.compare_digest(digest_text, _b64(self._digest(body))):
            return None
        try:
            return msgspec.json.decode(body, type=PlanClaim)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None
