"""Assemble authentication and authorization from the settings: verifier, provisioner, middleware, authorizer."""

from __future__ import annotations

from dataclasses import dataclass

from api.auth.authorizer import Authorizer
from api.auth.middleware import AuthenticationMiddleware
from api.auth.oidc import OidcConfig, OidcVerifier, split_list
from api.auth.provisioning import UserProvisioner
from api.settings import Settings


@dataclass(frozen=True)
class AuthComponents:
    verifier: OidcVerifier | None
    provisioner: UserProvisioner
    authorizer: Authorizer
    middleware: AuthenticationMiddleware

    async def start(self) -> None:
        if self.verifier is not None:
            await self.verifier.start()


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
    builtin = settings.authz.backend == "builtin"
    if builtin and verifier is None:
        raise ValueError("CATALOG_ES__AUTHZ__BACKEND=builtin needs authentication: set CATALOG_ES__OPENID_PROVIDER_URI")
    provisioner = UserProvisioner()
    return AuthComponents(
        verifier=verifier,
        provisioner=provisioner,
        authorizer=Authorizer(enabled=builtin),
        middleware=AuthenticationMiddleware(verifier, provisioner),
    )
