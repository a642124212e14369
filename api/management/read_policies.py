"""`/management/v1/permissions/warehouse/{wid}/table/{tid}/read-policies`: rows and columns per principal (issue 33)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import msgspec
from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter

from api.auth.rules import requires
from api.container import services
from api.dependencies import RequestScope
from api.management.access_checks import require_principals_exist
from api.management.rules import read_policy_manager
from catalog_es.errors import BadRequestError
from catalog_es.privileges import role_principal, user_principal
from catalog_es.store.database import Connection
from commands.read_policies import RemoveReadPolicy, SetReadPolicy, handle_remove_read_policy, handle_set_read_policy
from projections.permissions.read_policies import policies_on


class ReadPolicyRequest(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True):
    """Exactly one of `user` and `role`; `row-filter` an Iceberg expression in the REST spec's JSON form."""

    user: str | None = None
    role: uuid.UUID | None = None
    row_filter: Any = None
    columns: list[str] | None = None


class ReadPolicy(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", omit_defaults=True):
    user: str | None = None
    role: uuid.UUID | None = None
    row_filter: Any = None
    columns: list[str] | None = None


class ReadPoliciesResponse(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    policies: list[ReadPolicy]


def _principal(user: str | None, role: uuid.UUID | None) -> str:
    """Raises: BadRequestError unless exactly one of them is given."""
    if (user is None) == (role is None):
        raise BadRequestError("A read policy names exactly one of `user` and `role`")
    return user_principal(user) if user is not None else role_principal(role)  # type: ignore[arg-type]


def _policy(row: dict[str, Any]) -> ReadPolicy:
    kind, _, ident = str(row["principal"]).partition(":")
    who: dict[str, Any] = {"role": uuid.UUID(ident)} if kind == "role" else {"user": ident}
    return ReadPolicy(**who, row_filter=row["row-filter"], columns=row["columns"])


class ReadPoliciesController(Controller):
    path = "/permissions/warehouse/{warehouse_id:uuid}/table/{object_id:uuid}/read-policies"

    @get("", opt=requires(read_policy_manager))
    async def list_read_policies(
        self, object_id: FromPath[uuid.UUID], conn: NamedDependency[Connection]
    ) -> ReadPoliciesResponse:
        return ReadPoliciesResponse(policies=[_policy(row) for row in await policies_on(conn, object_id)])

    @post("", status_code=204, opt=requires(read_policy_manager))
    async def set_read_policy(
        self,
        req: NamedDependency[RequestScope],
        object_id: FromPath[uuid.UUID],
        data: JSONBody[ReadPolicyRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        """Replaces the principal's policy on the table. Raises: BadRequestError, NoSuchUserError, NoSuchRoleError."""
        principal = _principal(data.user, data.role)
        await require_principals_exist(conn, services(state).authorizer, req.principal, [principal])
        command = SetReadPolicy(object_id, principal, data.row_filter, data.columns, req.meta)
        await handle_set_read_policy(command, req.ctx)

    @delete("", status_code=204, opt=requires(read_policy_manager))
    async def remove_read_policy(
        self,
        req: NamedDependency[RequestScope],
        object_id: FromPath[uuid.UUID],
        user: Annotated[str | None, QueryParameter(name="user")] = None,
        role: Annotated[uuid.UUID | None, QueryParameter(name="role")] = None,
    ) -> None:
        await handle_remove_read_policy(RemoveReadPolicy(object_id, _principal(user, role), req.meta), req.ctx)
