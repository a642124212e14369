"""Users: provision self or another user, list, get, delete; `whoami`."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.params import Parameter

from api.auth.authorizer import Authorizer
from api.auth.principal import Principal
from api.auth.provisioning import UserProvisioner
from api.container import services
from api.encoded_slash import decode_name
from api.management.wire import CreateUserRequest, ListUsersResponse, User
from catalog_es.errors import NoSuchUserError, NotAuthorizedError
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.users import DeleteUser, ProvisionUser, handle_delete_user, handle_provision_user
from projections.permissions import queries as permissions_queries
from projections.permissions.queries import UserRow


def _user(row: UserRow) -> User:
    return User(
        id=row.id,
        name=row.name,
        email=row.email,
        user_type=row.user_type,
        last_updated_with=row.last_updated_with,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


async def _require_admin_unless_self(conn: Connection, state: State, principal: Principal, user_id: str) -> None:
    authz: Authorizer = services(state).authorizer
    if user_id != principal.user_id and not await authz.allowed(conn, principal, SERVER_OBJECT_ID, "admin"):
        raise NotAuthorizedError("Only a server admin may manage other users")


async def _require_server_role_unless_self(
    conn: Connection, state: State, principal: Principal, user_id: str | None = None
) -> None:
    """Reading users (names, e-mails) of the whole server: a server admin or operator (Lakekeeper's
    `can_list_users` on the server). Project admins, even security admins, see no other tenant's users;
    anyone may read their own record.
    """
    authz: Authorizer = services(state).authorizer
    if user_id != principal.user_id and not await authz.allowed(conn, principal, SERVER_OBJECT_ID, "operator"):
        raise NotAuthorizedError("Only a server admin or operator may read other users")


async def _existing(conn: Connection, user_id: str) -> UserRow:
    row = await permissions_queries.user(conn, user_id)
    if row is None:
        raise NoSuchUserError(f"User {user_id!r} does not exist")
    return row


class UsersController(Controller):
    path = "/management/v1/user"

    @post("", status_code=201, operation_id="create_user")
    async def authz_create_user(
        self,
        data: CreateUserRequest,
        ctx: CommandContext,
        conn: Connection,
        principal: Principal,
        state: State,
        meta: EventMetadata,
    ) -> User:
        """Provision the caller (no `id`) or, as server admin, another user. Raises: NotAuthorizedError."""
        user_id = data.id or principal.user_id
        await _require_admin_unless_self(conn, state, principal, user_id)
        is_self = user_id == principal.user_id
        command = ProvisionUser(
            user_id=user_id,
            name=data.name or (principal.name if is_self else user_id),
            email=data.email or (principal.email if is_self else None),
            user_type=data.user_type or (principal.user_type if is_self else "human"),
            last_updated_with="create-endpoint",
            metadata=meta,
            update_if_exists=data.update_if_exists,
        )
        await handle_provision_user(command, ctx)
        return _user(await _existing(conn, user_id))

    @get("", operation_id="list_user")
    async def authz_list_users(
        self,
        conn: Connection,
        state: State,
        principal: Principal,
        name: str | None = None,
        page_token: Annotated[str | None, Parameter(query="pageToken")] = None,
        page_size: Annotated[int, Parameter(query="pageSize", ge=1, le=1000)] = 100,
    ) -> ListUsersResponse:
        """Raises: NotAuthorizedError unless the caller is a server admin or operator."""
        await _require_server_role_unless_self(conn, state, principal)
        rows = await permissions_queries.list_users(conn, page_token or "", page_size + 1, name)
        token = rows[page_size - 1].id if len(rows) > page_size else None
        return ListUsersResponse(users=[_user(row) for row in rows[:page_size]], next_page_token=token)

    @get("/{user_id:str}", operation_id="get_user")
    async def authz_get_user(self, user_id: str, conn: Connection, state: State, principal: Principal) -> User:
        """Raises: NotAuthorizedError (another user, without a server role), NoSuchUserError."""
        await _require_server_role_unless_self(conn, state, principal, decode_name(user_id))
        return _user(await _existing(conn, decode_name(user_id)))

    @delete("/{user_id:str}", status_code=204, operation_id="delete_user")
    async def authz_delete_user(
        self,
        user_id: str,
        ctx: CommandContext,
        conn: Connection,
        principal: Principal,
        state: State,
        meta: EventMetadata,
    ) -> None:
        """Delete the user and every privilege granted to them. Raises: NoSuchUserError, NotAuthorizedError."""
        user_id = decode_name(user_id)  # an OIDC subject may hold a '/', sent as %2F like catalog names
        await _require_admin_unless_self(conn, state, principal, user_id)
        await handle_delete_user(DeleteUser(user_id=user_id, metadata=meta), ctx)
        provisioner: UserProvisioner = services(state).provisioner
        provisioner.forget(user_id)


@get("/management/v1/whoami", operation_id="whoami")
async def whoami(conn: Connection, principal: Principal) -> User:
    """The caller's user record. Raises: NoSuchUserError (anonymous callers have none)."""
    return _user(await _existing(conn, principal.user_id))
