"""Users: provision self or another user, list, get, delete; `whoami`."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter

from api.auth.provisioning import UserProvisioner
from api.auth.rules import anyone, requires
from api.container import services
from api.dependencies import RequestScope
from api.encoded_slash import decode_name
from api.management.grant_rules import new_user, user_lister, user_manager, user_reader
from api.management.wire import CreateUserRequest, ListUsersResponse, User
from catalog_es.errors import NoSuchUserError
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


async def _existing(conn: Connection, user_id: str) -> UserRow:
    row = await permissions_queries.user(conn, user_id)
    if row is None:
        raise NoSuchUserError(f"User {user_id!r} does not exist")
    return row


class UsersController(Controller):
    path = "/user"

    @post("", status_code=201, operation_id="create_user", opt=requires(new_user))
    async def create_user(self, req: NamedDependency[RequestScope], data: JSONBody[CreateUserRequest]) -> User:
        """Provision the caller (no `id`) or, as server admin, another user."""
        user_id = data.id or req.principal.user_id
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
        async with req.ctx.store.connection() as conn:  # taken after the command's own: one at a time
            return _user(await _existing(conn, user_id))

    @get("", operation_id="list_user", opt=requires(user_lister))
    async def list_users(
        self,
        conn: NamedDependency[Connection],
        name: FromQuery[str | None] = None,
        page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
        page_size: Annotated[int, QueryParameter(name="pageSize", ge=1, le=1000)] = 100,
    ) -> ListUsersResponse:
        rows = await permissions_queries.list_users(conn, page_token or "", page_size + 1, name)
        token = rows[page_size - 1].id if len(rows) > page_size else None
        return ListUsersResponse(users=[_user(row) for row in rows[:page_size]], next_page_token=token)

    @get("/{user_id:str}", operation_id="get_user", opt=requires(user_reader))
    async def get_user(self, user_id: FromPath[str], conn: NamedDependency[Connection]) -> User:
        """Raises: NoSuchUserError."""
        return _user(await _existing(conn, decode_name(user_id)))

    @delete("/{user_id:str}", status_code=204, operation_id="delete_user", opt=requires(user_manager))
    async def delete_user(self, req: NamedDependency[RequestScope], user_id: FromPath[str], state: State) -> None:
        """Delete the user and every privilege granted to them. Raises: NoSuchUserError."""
        user_id = decode_name(user_id)  # an OIDC subject may hold a '/', sent as %2F like catalog names
        await handle_delete_user(DeleteUser(user_id=user_id, metadata=req.meta), req.ctx)
        provisioner: UserProvisioner = services(state).provisioner
        provisioner.forget(user_id)


@get("/whoami", operation_id="whoami", opt=requires(anyone))
async def whoami(req: NamedDependency[RequestScope], conn: NamedDependency[Connection]) -> User:
    """The caller's user record. Raises: NoSuchUserError (anonymous callers have none)."""
    return _user(await _existing(conn, req.principal.user_id))
