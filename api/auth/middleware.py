"""The authentication middleware: a verified bearer token (or anonymity when auth is off) for every request."""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from api.auth.local_tokens import TOKEN_PATH, LocalTokens, is_local_token
from api.auth.oidc import OidcVerifier, TokenRejectedError
from api.auth.principal import ANONYMOUS, Principal
from api.auth.provisioning import UserProvisioner
from api.container import services
from api.errors import error_body

# Health checks and the API documentation stay open (as Lakekeeper's /health does), and so does the console's
# shell (api/console): it holds no data, and fetches everything from the API with the user's token.
# The token endpoint is where a service principal gets its first token (it authenticates the client itself).
_OPEN_PATHS = frozenset({"/health", "/", "/ui", "/ui/config.json", TOKEN_PATH})
_OPEN_PREFIXES = ("/docs", "/api-docs/", "/swagger-ui", "/ui/static/")


def bearer_token(scope: Scope) -> str | None:
    """The token of `Authorization: Bearer <token>`; pyiceberg without a token sends `Bearer None`."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or token in ("", "None"):
                return None
            return token
    return None


async def _unauthorized(send: Send, message: str) -> None:
    body = error_body(401, "NotAuthorizedException", message)
    headers = [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="catalog-es"')]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class AuthenticationMiddleware(ASGIMiddleware):
    """Puts the caller's `Principal` into `scope["state"]["principal"]`; answers 401 without a valid token."""

    scopes = (ScopeType.HTTP,)

    def __init__(
        self, verifier: OidcVerifier | None, provisioner: UserProvisioner, local: LocalTokens | None = None
    ) -> None:
        self.verifier = verifier
        self.provisioner = provisioner
        self.local = local

    @property
    def enabled(self) -> bool:
        return self.verifier is not None or self.local is not None

    async def _verify(self, token: str) -> Principal:
        """The catalog's own tokens by their key id, everything else by the OpenID provider."""
        if self.local is not None and is_local_token(token):
            return await self.local.verify(token)
        if self.verifier is None:
            raise TokenRejectedError("Unknown bearer token: use a token from /catalog/v1/oauth/tokens")
        return await self.verifier.verify(token)

    async def admit(self, scope: Scope, send: Send) -> bool:
        """Whether the request goes on, its principal in the scope's state; else it was answered 401 through `send`."""
        state = scope.setdefault("state", {})
        path = scope["path"]
        if not self.enabled or path in _OPEN_PATHS or path.startswith(_OPEN_PREFIXES):
            state["principal"] = ANONYMOUS
            return True
        token = bearer_token(scope)
        if token is None:
            await _unauthorized(send, "Authentication required: send an OAuth2 bearer token")
            return False
        try:
            principal = await self._verify(token)
        except TokenRejectedError as exc:
            await _unauthorized(send, str(exc))
            return False
        state["principal"] = principal
        await self.provisioner.ensure(services(scope["app"].state).ctx, principal, state.get("request_id"))
        return True

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        if await self.admit(scope, send):
            await next_app(scope, receive, send)
