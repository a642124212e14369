"""The catalog's own access tokens for service principals: HS256 JWTs under a key derived from the secrets key.

Verified without a database read: the signature, expiry, issuer and audience, then an in-memory revocation
list (`RevocationList`, fed by the log: api/auth/revocations.py) says whether the principal was revoked or
its secret rotated since the token was issued. Tokens name their signing key (`kid`), so the middleware can
tell them from an OpenID provider's, whose verifier accepts asymmetric algorithms only.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable
from typing import Any, Final

import jwt

from api.auth.oidc import TokenRejectedError
from api.auth.principal import Principal
from api.auth.token_limits import TokenRequestLimiter

TOKEN_PATH: Final = "/catalog/v1/oauth/tokens"  # noqa: S105 - a path, not a password
"""The OAuth2 token endpoint (form-encoded, open: it authenticates the client itself)."""
ISSUER: Final = "catalog-es"
AUDIENCE: Final = "catalog-es"
KID_PREFIX: Final = "catalog-es:"
_ALGORITHM: Final = "HS256"
_LEEWAY_SECONDS: Final = 5.0


def is_local_token(token: str) -> bool:
    """Whether the token says it was signed by this catalog (decided before any signature check)."""
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except jwt.PyJWTError:
        return False
    return isinstance(kid, str) and kid.startswith(KID_PREFIX)


class RevocationList:
    """Each service principal's lowest valid secret version (None: revoked), as the log says.

    `following` is false until the first load and whenever the follower lost the log: local tokens are then
    refused (fail closed) rather than accepted without knowing about a revocation.
    """

    def __init__(self) -> None:
        self._floors: dict[uuid.UUID, int | None] = {}
        self.following = False

    def replace(self, floors: dict[uuid.UUID, int | None]) -> None:
        self._floors = dict(floors)
        self.following = True

    def record(self, client_id: uuid.UUID, floor: int | None) -> None:
        """What this process just wrote or read itself, in force for its very next request. Only ever
        tightens: a revocation is final and a floor only rises, so a stale read cannot undo a newer fact."""
        if client_id in self._floors:
            known = self._floors[client_id]
            if known is None:
                return
            floor = None if floor is None else max(floor, known)
        self._floors[client_id] = floor

    def admits(self, client_id: uuid.UUID, key_version: int) -> bool:
        if not self.following:
            return False
        if client_id not in self._floors:
            return False  # created after the last look: unknown tokens are not trusted (the next look adds it)
        floor = self._floors[client_id]
        return floor is not None and key_version >= floor


class LocalTokens:
    """Issues and verifies the catalog's tokens."""

    def __init__(
        self,
        key: bytes,
        revocations: RevocationList,
        *,
        lifetime_seconds: int,
        clock: Callable[[], float] = time.time,
        limiter: TokenRequestLimiter | None = None,
    ) -> None:
        self.limiter = limiter or TokenRequestLimiter()  # how often the endpoint may check a secret
        self._key = key
        self._kid = KID_PREFIX + hashlib.sha256(key).hexdigest()[:16]  # another secrets key: another kid
        self.revocations = revocations
        self.lifetime_seconds = lifetime_seconds
        self._clock = clock

    def issue(self, client_id: uuid.UUID, user_id: str, name: str, key_version: int, scope: str) -> str:
        now = int(self._clock())
        claims = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": user_id,
            "client_id": str(client_id),
            "name": name,
            "ver": key_version,
            "scope": scope,
            "iat": now,
            "exp": now + self.lifetime_seconds,
            "jti": uuid.uuid4().hex,
        }
        return jwt.encode(claims, self._key, algorithm=_ALGORITHM, headers={"kid": self._kid})

    def claims(self, token: str) -> dict[str, Any]:
        """The verified claims of a live token. Raises: TokenRejectedError."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenRejectedError(f"Malformed bearer token: {exc}") from None
        if header.get("kid") != self._kid:
            raise TokenRejectedError("Token signed with an unknown catalog key")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                self._key,
                algorithms=[_ALGORITHM],
                audience=AUDIENCE,
                issuer=ISSUER,
                leeway=_LEEWAY_SECONDS,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
            client_id = uuid.UUID(str(claims["client_id"]))
            key_version = int(claims["ver"])
        except jwt.PyJWTError as exc:
            raise TokenRejectedError(f"Invalid bearer token: {exc}") from None
        except (KeyError, ValueError, TypeError):
            raise TokenRejectedError("Invalid bearer token: malformed claims") from None
        if not self.revocations.admits(client_id, key_version):
            raise TokenRejectedError("Token revoked: the service principal was revoked or its secret rotated")
        return claims

    async def verify(self, token: str) -> Principal:
        """Raises: TokenRejectedError."""
        claims = self.claims(token)
        return Principal(
            user_id=str(claims["sub"]),
            name=str(claims.get("name") or claims["sub"]),
            user_type="application",
            authenticated=True,
        )
