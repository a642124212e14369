"""Bootstrap: the server records its id once (caller becomes first admin); the default project and warehouse."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import AlreadyBootstrappedError, BadRequestError
from catalog_es.events import ProjectCreated, ServerBootstrapped, WarehouseCreated
from catalog_es.identifiers import NIL_PROJECT_ID
from catalog_es.locations import normalize_location
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext


class EnsureDefaultWarehouse(msgspec.Struct, frozen=True):
    """`location` None: the project only (file storage is not allowed where the default warehouse would be)."""

    warehouse_name: str
    location: str | None
    metadata: EventMetadata
    project_id: uuid.UUID = NIL_PROJECT_ID
    project_name: str = "default"


async def handle_ensure_default_warehouse(cmd: EnsureDefaultWarehouse, ctx: CommandContext) -> uuid.UUID | None:
    """Create the project and the warehouse unless they exist; return the warehouse id (None without one)."""
    async with ctx.store.transaction(cmd.metadata) as tx:
        if not await ctx.state.project_exists(tx.conn, cmd.project_id):
            await tx.append(ProjectCreated(project_id=cmd.project_id, name=cmd.project_name), expected_version=0)
        existing = await ctx.state.warehouse_by_name(tx.conn, cmd.project_id, cmd.warehouse_name)
        if existing is not None:
            return existing.id
        if cmd.location is None:
            return None
        warehouse = WarehouseCreated(
            warehouse_id=ctx.ids.new_id(),
            project_id=cmd.project_id,
            name=cmd.warehouse_name,
            storage_profile={"type": "file", "location": normalize_location(cmd.location)},
        )
        await tx.append(warehouse, expected_version=0)
    return warehouse.warehouse_id


def is_bootstrapped(server_id: uuid.UUID | None, *, allow_all: bool, default_project_exists: bool) -> bool:
    """Whether a bootstrap call is spent: the one rule behind both /info and the bootstrap refusal.

    Under the allow-all authorizer there is no first admin to name and `serve` already made the default
    project bootstrap would, so that project stands for it (Lakekeeper: bootstrap once, then refused).
    """
    return server_id is not None or (allow_all and default_project_exists)


class Bootstrap(msgspec.Struct, frozen=True, kw_only=True):
    """`allow_all`: the server runs the allow-all authorizer (see `is_bootstrapped`)."""

    accept_terms_of_use: bool
    metadata: EventMetadata
    is_operator: bool = False
    user_name: str | None = None
    user_email: str | None = None
    user_type: str | None = None
    create_default_project: bool = True
    allow_all: bool = False


async def handle_bootstrap(cmd: Bootstrap, ctx: CommandContext) -> uuid.UUID:
    """Record the bootstrap (and the default project unless it exists); return the new server id.

    Raises: BadRequestError when the terms are not accepted, AlreadyBootstrappedError on a second call.
    """
    if not cmd.accept_terms_of_use:
        raise BadRequestError("Bootstrap requires accept-terms-of-use: true")
    server_id = ctx.ids.new_id()
    async with ctx.store.transaction(cmd.metadata) as tx:
        default_project_exists = await ctx.state.project_exists(tx.conn, NIL_PROJECT_ID)
        current = await ctx.state.server_id(tx.conn)
        if is_bootstrapped(current, allow_all=cmd.allow_all, default_project_exists=default_project_exists):
            raise AlreadyBootstrappedError("The catalog is already bootstrapped")
        await tx.append(
            ServerBootstrapped(
                server_id=server_id,
                is_operator=cmd.is_operator,
                user_name=cmd.user_name,
                user_email=cmd.user_email,
                user_type=cmd.user_type,
            ),
            expected_version=0,
        )
        if cmd.create_default_project and not default_project_exists:
            await tx.append(ProjectCreated(project_id=NIL_PROJECT_ID, name="default"), expected_version=0)
    return server_id
