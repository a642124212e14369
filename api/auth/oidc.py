"""OpenID Connect access-token verification: discovery, a cached JWKS (refetched, rate-limited, on an unknown key id)
and PyJWT's signature, expiry, issuer and audience checks, then our scope, subject and roles rules."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import jwt
import structlog

from api.auth.principal import Principal

_log = structlog.get_logger("catalog_es.auth")

# Asymmetric algorithms only: an HMAC "key" from a public JWKS would let anyone sign.
_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"})
_REFETCH_INTERVAL_SECONDS = 10.0
_LEEWAY_SECONDS = 5.0


class TokenRejectedError(Exception):
    """The token is missing, malformed, badly signed, expired, or not meant for us."""


class OidcConfig:
    """What the verifier needs from the settings (comma lists already split)."""

    def __init__(
        self,
        provider_uri: str,
        *,
        audiences: Sequence[str] = (),
        additional_issuers: Sequence[str] = (),
        scope: str | None = None,
        subject_claim: str | None = None,
        roles_claim: str | None = None,
    ) -> None:
        self.provider_uri = provider_uri.rstrip("/")
        self.audiences = tuple(audiences)
        self.additional_issuers = tuple(additional_issuers)
        self.scope = scope
        self.subject_claim = subject_claim
        self.roles_claim = roles_claim


def split_list(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


class OidcVerifier:
    """Verifies bearer tokens; provider metadata and keys are fetched with httpx and cached, never per request."""

    def __init__(self, config: OidcConfig, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._config = config
        self._monotonic = monotonic
        self._lock = asyncio.Lock()
        self._issuers: tuple[str, ...] = ()
        self._jwks_uri: str | None = None
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched_at = -_REFETCH_INTERVAL_SECONDS

    async def start(self) -> None:
        """Fetch discovery and keys now (best effort: a provider down at start-up is retried on first use)."""
        try:
            async with self._lock:
                await self._refresh()
        except (httpx.HTTPError, ValueError, TypeError, KeyError) as exc:
            _log.warning("oidc.discovery_failed", provider=self._config.provider_uri, error=str(exc))

    async def verify(self, token: str) -> Principal:
        """Raises: TokenRejectedError."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenRejectedError(f"Malformed bearer token: {exc}") from None
        algorithm = header.get("alg")
        if algorithm not in _ALGORITHMS:
            raise TokenRejectedError(f"Token algorithm {algorithm!r} is not accepted")
        key = await self._key(header.get("kid"))
        config = self._config
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=config.audiences or None,
                issuer=self._issuers,
                leeway=_LEEWAY_SECONDS,
                options={"require": ["exp", "iss"], "verify_aud": bool(config.audiences)},
            )
        except jwt.PyJWTError as exc:
            raise TokenRejectedError(f"Invalid bearer token: {exc}") from None
        if config.scope and config.scope not in _scopes(claims):
            raise TokenRejectedError(f"Token lacks the required scope {config.scope!r}")
        return principal_from_claims(claims, config)

    async def _key(self, kid: str | None) -> jwt.PyJWK:
        key = self._lookup(kid)
        if key is not None:
            return key
        async with self._lock:  # one refetch at a time, at most one per interval (rotation, not a DoS lever)
            key = self._lookup(kid)
            if key is None and self._monotonic() - self._fetched_at >= _REFETCH_INTERVAL_SECONDS:
                try:
                    await self._refresh()
                except (httpx.HTTPError, ValueError, TypeError, KeyError) as exc:
                    _log.warning("oidc.jwks_fetch_failed", provider=self._config.provider_uri, error=str(exc))
                    raise TokenRejectedError("The identity provider's keys are unavailable") from None
                key = self._lookup(kid)
        if key is None:
            raise TokenRejectedError(f"Unknown signing key {kid!r}")
        return key

    def _lookup(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        self._fetched_at = self._monotonic()
        async with httpx.AsyncClient(timeout=10) as client:
            if self._jwks_uri is None:
                discovery = await _get_json(client, f"{self._config.provider_uri}/.well-known/openid-configuration")
                self._issuers = (str(discovery["issuer"]), *self._config.additional_issuers)
                self._jwks_uri = str(discovery["jwks_uri"])
            jwks = await _get_json(client, self._jwks_uri)
        keys: dict[str | None, jwt.PyJWK] = {}
        for entry in jwks.get("keys", []):
            if entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK(entry)
            except jwt.PyJWTError:
                continue  # a key type we cannot use
            keys[key.key_id] = key
        self._keys = keys
        _log.info("oidc.keys_fetched", provider=self._config.provider_uri, keys=len(keys))


async def _get_json(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    response = await client.get(url)
    response.raise_for_status()
    document = response.json()
    if not isinstance(document, dict):
        raise TypeError(f"{url} did not answer a JSON object")
    return document


def _scopes(claims: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for claim in ("scope", "scp"):
        value = claims.get(claim)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(str(item) for item in value)
    return found


def _dotted(claims: dict[str, Any], path: str) -> Any:
    node: Any = claims
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def principal_from_claims(claims: dict[str, Any], config: OidcConfig) -> Principal:
    """User id `oidc~<subject>`, display name and email as Lakekeeper derives them, roles from the roles claim.

    Raises: TokenRejectedError when the subject claim is missing.
    """
    names = (config.subject_claim,) if config.subject_claim else ("oid", "sub")
    subject = next((str(claims[name]) for name in names if claims.get(name)), None)
    if subject is None:
        raise TokenRejectedError(f"Token has no subject claim ({', '.join(names)})")
    given = " ".join(str(claims[part]) for part in ("given_name", "family_name") if claims.get(part))
    name = next(
        (
            str(value)
            for value in (claims.get("name"), given, claims.get("app_displayname"), claims.get("preferred_username"))
            if value
        ),
        subject,
    )
    email = claims.get("email") or claims.get("upn")
    human = bool(email or given or claims.get("preferred_username"))
    roles_value = _dotted(claims, config.roles_claim) if config.roles_claim else None
    roles = tuple(str(role) for role in roles_value) if isinstance(roles_value, list) else ()
    return Principal(
        user_id=f"oidc~{subject}",
        name=name,
        email=str(email) if email else None,
        user_type="human" if human else "application",
        roles=roles,
        authenticated=True,
    )
