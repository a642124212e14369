"""`/management/v1/permissions/warehouse/{wid}/table/{tid}/read-policies`: rows and columns per principal (issue 33)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from litestar import Controller, delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.access_checks import read_policy_principal
from api.management.grant_rules import read_policy_setter
from api.management.rules import read_policy_manager
from api.management.wire import ReadPoliciesResponse, ReadPolicy, ReadPolicyRequest
from catalog_es.store.database import Connection
from commands.read_policies import RemoveReadPolicy, SetReadPolicy, handle_remove_read_policy, handle_set_read_policy
from projections.permissions.read_policies import policies_on


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

    @post("", status_code=204, opt=requires(read_policy_setter))
    async def set_read_policy(
        self, req: NamedDependency[RequestScope], object_id: FromPath[uuid.UUID], data: JSONBody[ReadPolicyRequest]
    ) -> None:
        """Replaces the principal's policy on the table (who it names, its rule checked). Raises: BadRequestError."""
        principal = read_policy_principal(data.user, data.role)
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
        principal = read_policy_principal(user, role)
        await handle_remove_read_policy(RemoveReadPolicy(object_id, principal, req.meta), req.ctx)
