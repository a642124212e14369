"""`catalog-es principal`: create, list, rotate and revoke service principals (client credentials) on a catalog."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.session import DataDir, Json, cli_dsn, cli_settings, command_group, fail

if TYPE_CHECKING:
    from collections.abc import Callable

    from catalog_es.store.eventstore import EventMetadata
    from commands.service_principals import (
        CreateServicePrincipal,
        Credentials,
        RevokeServicePrincipal,
        RotateSecret,
    )

    Command = CreateServicePrincipal | RotateSecret | RevokeServicePrincipal

principal_cli = command_group("Service principals: client id and secret for the catalog's own OAuth2 endpoint.")


def _run_command(data_dir: str | None, build: Callable[[EventMetadata], Command]) -> Credentials | None:
    """Run one service-principal command (`build(metadata)` makes it) on the catalog; None for a revocation."""
    from api.container import open_services  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from api.runtime.schema_check import migrate_or_exit  # noqa: PLC0415
    from catalog_es.errors import CatalogError  # noqa: PLC0415
    from catalog_es.store.eventstore import EventMetadata  # noqa: PLC0415
    from commands.service_principals import (  # noqa: PLC0415
        CreateServicePrincipal,
        RevokeServicePrincipal,
        RotateSecret,
        handle_create_service_principal,
        handle_revoke_service_principal,
        handle_rotate_secret,
    )

    settings = cli_settings(data_dir)
    dsn = cli_dsn(settings)
    migrate_or_exit(dsn, settings.allow_newer_schema)
    command = build(EventMetadata(actor="cli"))

    async def _go() -> Credentials | None:
        async with open_services(settings, dsn, pool_size=(1, 1)) as services:
            if isinstance(command, CreateServicePrincipal):
                return await handle_create_service_principal(command, services.ctx)
            if isinstance(command, RotateSecret):
                return await handle_rotate_secret(command, services.ctx)
            assert isinstance(command, RevokeServicePrincipal)
            await handle_revoke_service_principal(command, services.ctx)
            return None

    try:
        return asyncio.run(_go())
    except CatalogError as exc:
        fail(str(exc))


def _show(credentials: Credentials, as_json: bool) -> None:
    if as_json:
        import msgspec  # noqa: PLC0415

        document = {
            "client-id": str(credentials.client_id),
            "client-secret": credentials.client_secret,
            "credential": credentials.credential,
            "user-id": credentials.user_id,
            "key-version": credentials.key_version,
        }
        typer.echo(msgspec.json.encode(document).decode())
        return
    typer.echo(f"client id:   {credentials.client_id}")
    typer.echo(f"user id:     {credentials.user_id} (grant it privileges like any user)")
    typer.echo(f"credential:  {credentials.credential}")
    typer.echo("The secret is shown only now; it is stored only as a hash.")


@principal_cli.command("create")
def create(
    name: Annotated[str, typer.Argument(help="A name for people (e.g. the job or service)")],
    data_dir: DataDir = None,
    server_admin: Annotated[bool, typer.Option("--server-admin", help="Make it a server admin")] = False,
    as_json: Json = False,
) -> None:
    """Create a service principal and print its credential (once)."""
    from commands.service_principals import CreateServicePrincipal  # noqa: PLC0415

    credentials = _run_command(
        data_dir, lambda meta: CreateServicePrincipal(name=name, metadata=meta, server_admin=server_admin)
    )
    assert credentials is not None
    _show(credentials, as_json)


@principal_cli.command("rotate")
def rotate(
    client_id: Annotated[uuid.UUID, typer.Argument(help="The principal's client id")],
    data_dir: DataDir = None,
    as_json: Json = False,
) -> None:
    """Give the principal a new secret; the old one and its tokens stop working."""
    from commands.service_principals import RotateSecret  # noqa: PLC0415

    credentials = _run_command(data_dir, lambda meta: RotateSecret(client_id=client_id, metadata=meta))
    assert credentials is not None
    _show(credentials, as_json)


@principal_cli.command("revoke")
def revoke(
    client_id: Annotated[uuid.UUID, typer.Argument(help="The principal's client id")],
    data_dir: DataDir = None,
) -> None:
    """Revoke the principal: no more tokens, and issued ones are refused."""
    from commands.service_principals import RevokeServicePrincipal  # noqa: PLC0415

    _run_command(data_dir, lambda meta: RevokeServicePrincipal(client_id=client_id, metadata=meta))
    typer.echo(f"revoked {client_id}")


@principal_cli.command("list")
def list_principals(
    data_dir: DataDir = None,
    include_revoked: Annotated[bool, typer.Option("--include-revoked", help="Also revoked principals")] = False,
) -> None:
    """The service principals (never their secrets)."""
    from api.cli.session import on_connection  # noqa: PLC0415
    from projections.permissions import queries  # noqa: PLC0415

    settings = cli_settings(data_dir)
    rows = on_connection(settings, lambda conn: queries.list_service_principals(conn, include_revoked=include_revoked))
    for row in rows:
        state = f"revoked {row.revoked_at:%Y-%m-%d %H:%M}" if row.revoked_at else f"secret v{row.key_version}"
        typer.echo(f"{row.client_id}  {row.name}  {row.user_id}  {state}")
