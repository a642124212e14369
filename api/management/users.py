"""Users: provision self or another user, list, get, delete; `whoami`."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from api.auth.authorizer import Authorizer
from api.auth.principal import Principal
from api.auth.provisioning import UserProvisioner
from api.auth.rules import anyone, in_handler, requires
from api.container import services
from api.dependencies import RequestScope
from api.encoded_slash import decode_name
from api.management.wire import CreateUserRequest, ListUsersResponse, User
from catalog_es.errors import NoSuchUserError, NotAuthorizedError
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.database import Connection
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
    path = "/user"

    @post("", status_code=201, operation_id="create_user", opt=requires(in_handler))
    async def create_user(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[CreateUserRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> User:
        """Provision the caller (no `id`) or, as server admin, another user. Raises: NotAuthorizedError."""
        user_id = data.id or req.principal.user_id
        await _require_admin_unless_self(conn, state, req.principal, user_id)
        is_self = user_id == req.principal.user_id
        command = ProvisionUser(
            user_id=user_id,
            name=data.name or (req.principal.name if is_self else user_id),
            email=data.email or (req.principal.email if is_self else None),
            user_type=data.user_type or (req.principal.user_type if is_self else "human"),
            last_updated_with="create-endpoint",
            metadata=req.meta,
            update_if_exists=data.update_if_exists,
        )
        await handle_provision_user(command, req.ctx)
        return _user(await _existing(conn, user_id))

    @get("", operation_id="list_user", opt=requires(in_handler))
    async def list_users(
        self,
        req: NamedDependency[RequestScope],
        conn: NamedDependency[Connection],
        state: State,
        name: FromQuery[str | None] = None,
        page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
        page_size: Annotated[int, QueryParameter(name="pageSize", ge=1, le=1000)] = 100,
    ) -> ListUsersResponse:
        """Raises: NotAuthorizedError unless the caller is a server admin or operator."""
        await _require_server_role_unless_self(conn, state, req.principal)
        rows = await permissions_queries.list_users(conn, page_token or "", page_size + 1, name)
        token = rows[page_size - 1].id if len(rows) > page_size else None
        return ListUsersResponse(users=[_user(row) for row in rows[:page_size]], next_page_token=token)

    @get("/{user_id:str}", operation_id="get_user", opt=requires(in_handler))
    async def get_user(
        self,
        req: NamedDependency[RequestScope],
        user_id: FromPath[str],
        conn: NamedDependency[Connection],
        state: State,
    ) -> User:
        """Raises: NotAuthorizedError (another user, without a server role), NoSuchUserError."""
        await _require_server_role_unless_self(conn, state, req.principal, decode_name(user_id))
        return _user(await _existing(conn, decode_name(user_id)))

    @delete("/{user_id:str}", status_code=204, operation_id="delete_user", opt=requires(in_handler))
    async def delete_user(
        self,
        req: NamedDependency[RequestScope],
        user_id: FromPath[str],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        """Delete the user and every privilege granted to them. Raises: NoSuchUserError, NotAuthorizedError."""
        user_id = decode_name(user_id)  # an OIDC subject may hold a '/', sent as %2F like catalog names
        await _require_admin_unless_self(conn, state, req.principal, user_id)
        await handle_delete_user(DeleteUser(user_id=user_id, metadata=req.meta), req.ctx)
        provisioner: UserProvisioner = services(state).provisioner
        provisioner.forget(user_id)


@get("/whoami", operation_id="whoami", opt=requires(anyone))
async def whoami(req: NamedDependency[RequestScope], conn: NamedDependency[Connection]) -> User:
    """The caller's user record. Raises: NoSuchUserError (anonymous callers have none)."""
    return _user(await _existing(conn, req.principal.user_id))
