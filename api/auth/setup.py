"""Assemble authentication and authorization from the settings: verifiers, provisioner, middleware, authorizer."""

from __future__ import annotations

from dataclasses import dataclass

from api.auth.authorizer import Authorizer
from api.auth.local_tokens import LocalTokens, RevocationList
from api.auth.middleware import AuthenticationMiddleware
from api.auth.oidc import OidcConfig, OidcVerifier, split_list
from api.auth.provisioning import UserProvisioner
from api.auth.token_limits import TokenRequestLimiter
from api.settings import Settings
from catalog_es.store.secrets import SecretStore, load_secrets_key

TOKEN_SIGNING_PURPOSE = "service-principal tokens"  # noqa: S105 - a key derivation label


@dataclass(frozen=True)
class AuthComponents:
    verifier: OidcVerifier | None
    provisioner: UserProvisioner
    authorizer: Authorizer
    middleware: AuthenticationMiddleware
    local: LocalTokens | None = None  # the catalog's own tokens (service principals)

    @property
    def authenticates(self) -> bool:
        return self.middleware.enabled

    async def start(self) -> None:
        if self.verifier is not None:
            await self.verifier.start()


def local_tokens(settings: Settings) -> LocalTokens | None:
    """The service-principal token signer and verifier, when enabled.

    Raises: ValueError without a secrets key (the signing key is derived from it).
    """
    if not settings.service_principals.enabled:
        return None
    if settings.secrets_key is None and settings.pg_dsn is not None:
        raise ValueError("CATALOG_ES__SERVICE_PRINCIPALS__ENABLED needs a secrets key: set CATALOG_ES__SECRETS_KEY")
    store = SecretStore(load_secrets_key(settings.secrets_key, settings.data_path))
    return LocalTokens(
        store.signing_key(TOKEN_SIGNING_PURPOSE),
        RevocationList(),
        lifetime_seconds=settings.service_principals.token_lifetime_seconds,
        limiter=TokenRequestLimiter(
            settings.service_principals.token_requests_per_minute,
            settings.service_principals.token_requests_per_minute_per_peer,
        ),
    )


def build_auth(settings: Settings) -> AuthComponents:
    """Raises: ValueError for the builtin authorizer without authentication (every caller would be anonymous)."""
    verifier = None
    if settings.openid_provider_uri:
        config = OidcConfig(
            settings.openid_provider_uri,
            audiences=split_list(settings.openid_audience),
            additional_issuers=split_list(settings.openid_additional_issuers),
            scope=settings.openid_scope,
            subject_claim=settings.openid_subject_claim,
            roles_claim=settings.openid_roles_claim,
        )
        verifier = OidcVerifier(config)
    local = local_tokens(settings)
    builtin = settings.authz.backend == "builtin"
    if builtin and verifier is None and local is None:
        raise ValueError(
            "CATALOG_ES__AUTHZ__BACKEND=builtin needs authentication: set CATALOG_ES__OPENID_PROVIDER_URI"
            " or CATALOG_ES__SERVICE_PRINCIPALS__ENABLED=true"
        )
    provisioner = UserProvisioner()
    return AuthComponents(
        verifier=verifier,
        provisioner=provisioner,
        authorizer=Authorizer(enabled=builtin),
        middleware=AuthenticationMiddleware(verifier, provisioner, local),
        local=local,
    )
