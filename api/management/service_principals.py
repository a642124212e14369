"""Service principals: create (secret shown once), list, read, rotate the secret, revoke; server admins only."""

from __future__ import annotations

import uuid

from litestar import Controller, Response, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody

from api.auth.rules import requires
from api.container import services
from api.dependencies import RequestScope
from api.management.rules import server_admin
from api.management.wire import (
    CreateServicePrincipalRequest,
    ListServicePrincipalsResponse,
    ServicePrincipal,
    ServicePrincipalCredentials,
)
from catalog_es.errors import NoSuchServicePrincipalError
from catalog_es.store.database import Connection
from commands.service_principals import (
    CreateServicePrincipal,
    Credentials,
    RevokeServicePrincipal,
    RotateSecret,
    handle_create_service_principal,
    handle_revoke_service_principal,
    handle_rotate_secret,
)
from projections.permissions import queries as permissions_queries
from projections.permissions.queries import ServicePrincipalRow

# A secret is answered once (the management router keeps no idempotent replies) and never cached on the way.
_SECRET_OPT = requires(server_admin)
_NO_STORE = {"cache-control": "no-store"}


def _principal(row: ServicePrincipalRow) -> ServicePrincipal:
    return ServicePrincipal(
        client_id=row.client_id,
        user_id=row.user_id,
        name=row.name,
        key_version=row.key_version,
        created_at=row.created_at,
        updated_at=row.updated_at,
        revoked_at=row.revoked_at,
    )


def _shown_once(credentials: Credentials, status: int) -> Response[ServicePrincipalCredentials]:
    body = ServicePrincipalCredentials(
        client_id=credentials.client_id,
        client_secret=credentials.client_secret,
        credential=credentials.credential,
        user_id=credentials.user_id,
        key_version=credentials.key_version,
    )
    return Response(body, status_code=status, headers=_NO_STORE)


class ServicePrincipalsController(Controller):
    path = "/service-principal"

    @post("", operation_id="create_service_principal", opt=_SECRET_OPT)
    async def create(
        self, req: NamedDependency[RequestScope], data: JSONBody[CreateServicePrincipalRequest]
    ) -> Response[ServicePrincipalCredentials]:
        """A principal acting as user `principal~<client id>`, with no privileges until granted (like any user)."""
        credentials = await handle_create_service_principal(
            CreateServicePrincipal(name=data.name, metadata=req.meta), req.ctx
        )
        return _shown_once(credentials, 201)

    @get("", operation_id="list_service_principals", opt=requires(server_admin))
    async def list_principals(
        self, conn: NamedDependency[Connection], include_revoked: FromQuery[bool] = False
    ) -> ListServicePrincipalsResponse:
        rows = await permissions_queries.list_service_principals(conn, include_revoked=include_revoked)
        return ListServicePrincipalsResponse(service_principals=[_principal(row) for row in rows])

    @get("/{client_id:uuid}", operation_id="get_service_principal", opt=requires(server_admin))
    async def get_principal(
        self, conn: NamedDependency[Connection], client_id: FromPath[uuid.UUID]
    ) -> ServicePrincipal:
        """Raises: NoSuchServicePrincipalError."""
        row = await permissions_queries.service_principal(conn, client_id)
        if row is None:
            raise NoSuchServicePrincipalError(f"Service principal {client_id} does not exist")
        return _principal(row)

    @post("/{client_id:uuid}/rotate-secret", operation_id="rotate_service_principal_secret", opt=_SECRET_OPT)
    async def rotate(
        self, req: NamedDependency[RequestScope], client_id: FromPath[uuid.UUID], state: State
    ) -> Response[ServicePrincipalCredentials]:
        """A new secret; the old one and tokens issued under it stop working. Raises: NoSuchServicePrincipalError."""
        credentials = await handle_rotate_secret(RotateSecret(client_id=client_id, metadata=req.meta), req.ctx)
        tokens = services(state).local_tokens
        if tokens is not None:
            tokens.revocations.record(client_id, credentials.key_version)
        return _shown_once(credentials, 200)

    @post("/{client_id:uuid}/revoke", status_code=204, operation_id="revoke_service_principal", opt=_SECRET_OPT)
    async def revoke(self, req: NamedDependency[RequestScope], client_id: FromPath[uuid.UUID], state: State) -> None:
        """No more tokens, and issued ones are refused. Raises: NoSuchServicePrincipalError (unknown or revoked)."""
        await handle_revoke_service_principal(RevokeServicePrincipal(client_id=client_id, metadata=req.meta), req.ctx)
        tokens = services(state).local_tokens
        if tokens is not None:
            tokens.revocations.record(client_id, None)
