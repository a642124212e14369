"""`serve --secure`: authentication on without an identity provider, and the first admin as a service principal.

A data dir once served with `--secure` keeps a `secure` marker, so a later `serve` on it (without the flag)
does not come up open. The first admin is made only while the server has no admin yet (never bootstrapped):
it is the principal that bootstraps the server, so nobody can claim the server through `POST /bootstrap`.
With an OpenID provider configured no principal is made: the provider's admin bootstraps as before.
"""

from __future__ import annotations

import msgspec

from api.container import open_services
from api.settings import Settings
from catalog_es.errors import AlreadyBootstrappedError
from catalog_es.store.eventstore import EventMetadata
from commands.bootstrap import Bootstrap, handle_bootstrap
from commands.service_principals import (
    CreateServicePrincipal,
    Credentials,
    RevokeServicePrincipal,
    handle_create_service_principal,
    handle_revoke_service_principal,
)

MARKER = "secure"
FIRST_ADMIN_NAME = "admin"


def secured(settings: Settings, *, requested: bool) -> Settings:
    """The settings with the builtin authorizer and service principals on, when asked or marked in the data dir.

    Writes the marker when asked (embedded mode: the data dir is the catalog).
    """
    marker = settings.data_path / MARKER
    embedded = settings.pg_dsn is None
    if not requested and not (embedded and marker.exists()):
        return settings
    if embedded:
        settings.data_path.mkdir(parents=True, exist_ok=True)
        marker.write_text("serve --secure: authentication on (builtin authorizer, service principals)\n")
    return msgspec.structs.replace(
        settings,
        authz=msgspec.structs.replace(settings.authz, backend="builtin"),
        service_principals=msgspec.structs.replace(settings.service_principals, enabled=True),
    )


async def first_admin(dsn: str, settings: Settings) -> Credentials | None:
    """Create the first admin principal unless the server has an admin already; its credentials, shown once."""
    async with open_services(settings, dsn, pool_size=(1, 1)) as services:
        async with services.pool.connection() as conn:
            if await services.read_model.server_id(conn) is not None:
                return None
        system = EventMetadata(actor="system")
        credentials = await handle_create_service_principal(
            CreateServicePrincipal(name=FIRST_ADMIN_NAME, metadata=system), services.ctx
        )
        try:
            await handle_bootstrap(
                Bootstrap(
                    accept_terms_of_use=True,
                    user_name=FIRST_ADMIN_NAME,
                    user_type="application",
                    metadata=EventMetadata(actor=credentials.user_id),
                ),
                services.ctx,
            )
        except AlreadyBootstrappedError:  # someone else bootstrapped meanwhile: this principal is not needed
            revoke = RevokeServicePrincipal(client_id=credentials.client_id, metadata=system)
            await handle_revoke_service_principal(revoke, services.ctx)
            return None
        return credentials


def connect_lines(settings: Settings, credentials: Credentials | None) -> str:
    """How pyiceberg and Spark connect with a principal's credential (the secret only if just created)."""
    uri, name = settings.public_uri, settings.default_warehouse
    credential = credentials.credential if credentials else "<client id>:<client secret>"
    heading = (
        f"First admin service principal created (client id {credentials.client_id}); its secret is shown only now:"
        if credentials
        else "Authentication is on: create service principals with `catalog-es principal create NAME`."
    )
    return f"""{heading}

Connect pyiceberg:
    from pyiceberg.catalog import load_catalog
    catalog = load_catalog("catalog_es", type="rest", uri="{uri}", warehouse="{name}",
                           credential="{credential}", scope="catalog",
                           **{{"oauth2-server-uri": "{uri}/v1/oauth/tokens"}})

Connect Spark (conf keys):
    spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
    spark.sql.catalog.catalog_es=org.apache.iceberg.spark.SparkCatalog
    spark.sql.catalog.catalog_es.type=rest
    spark.sql.catalog.catalog_es.uri={uri}
    spark.sql.catalog.catalog_es.warehouse={name}
    spark.sql.catalog.catalog_es.credential={credential}
    spark.sql.catalog.catalog_es.oauth2-server-uri={uri}/v1/oauth/tokens
    spark.sql.catalog.catalog_es.scope=catalog
    spark.sql.catalog.catalog_es.io-impl=org.apache.iceberg.hadoop.HadoopFileIO
"""
