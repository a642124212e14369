"""Lakekeeper's `/management/v1/permissions/...`: assignments per object, managed access, check and batch-check."""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.listing_filter import ListingAccess
from api.auth.principal import Principal
from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.access_checks import assignment_of, path_object, principal_of
from api.management.grant_rules import (
    batch_check_asker,
    check_asker,
    checked_object,
    grants_changer,
    grants_reader,
    managed_access,
)
from api.management.wire import (
    AssignmentsResponse,
    BatchCheckRequest,
    BatchCheckResponse,
    CheckRequest,
    CheckResponse,
    EffectiveAssignment,
    EffectiveAssignmentsResponse,
    ManagedAccess,
    ManagedAccessResponse,
    UpdateAssignmentsRequest,
)
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.database import Connection
from commands.permissions import (
    ChangeAssignments,
    SetManagedAccess,
    handle_change_assignments,
    handle_set_managed_access,
)
from projections.permissions import queries as permissions_queries


async def _assignments(conn: Connection, object_id: uuid.UUID) -> AssignmentsResponse:
    rows = await permissions_queries.assignments(conn, object_id)
    return AssignmentsResponse(assignments=[assignment_of(who, what) for who, what in rows])


async def _write(req: RequestScope, request: AnyRequest, data: UpdateAssignmentsRequest) -> None:
    """The change the rule (`grants_changer`) allowed, on the object it resolved from the same path."""
    target = path_object(request)
    writes = [(principal_of(a), a.type) for a in data.writes]
    deletes = [(principal_of(a), a.type) for a in data.deletes]
    await handle_change_assignments(
        ChangeAssignments(target.kind, target.object_id, writes, deletes, req.meta), req.ctx
    )


_OBJECT_ASSIGNMENTS = [
    f"/{kind}/{{object_id:uuid}}/assignments" for kind in ("project", "warehouse", "namespace", "role")
]
_TABULAR_ASSIGNMENTS = [
    f"/warehouse/{{warehouse_id:uuid}}/{kind}/{{object_id:uuid}}/assignments" for kind in ("table", "view")
]
_EFFECTIVE = [
    *(f"/{kind}/{{object_id:uuid}}/effective-assignments" for kind in ("warehouse", "namespace")),
    *(path.replace("/assignments", "/effective-assignments") for path in _TABULAR_ASSIGNMENTS),
]
_CONTAINERS = ["/warehouse/{object_id:uuid}", "/namespace/{object_id:uuid}"]
AnyRequest = Request[Any, Any, Any]


class PermissionsController(Controller):
    """Assignments on the server, projects, warehouses, namespaces, tables, views and roles."""

    path = "/permissions"

    @get("/server/assignments", operation_id="get_server_assignments", opt=requires(grants_reader))
    async def get_server(self, conn: NamedDependency[Connection]) -> AssignmentsResponse:
        return await _assignments(conn, SERVER_OBJECT_ID)

    @post(
        "/server/assignments",
        status_code=204,
        operation_id="update_server_assignments",
        opt=requires(grants_changer),
    )
    async def update_server(
        self, req: NamedDependency[RequestScope], request: AnyRequest, data: JSONBody[UpdateAssignmentsRequest]
    ) -> None:
        await _write(req, request, data)

    @get("/project/assignments", operation_id="get_project_assignments", opt=requires(grants_reader))
    async def get_project(
        self, req: NamedDependency[RequestScope], conn: NamedDependency[Connection]
    ) -> AssignmentsResponse:
        return await _assignments(conn, req.project_id)

    @post(
        "/project/assignments",
        status_code=204,
        operation_id="update_project_assignments",
        opt=requires(grants_changer),
    )
    async def update_project(
        self, req: NamedDependency[RequestScope], request: AnyRequest, data: JSONBody[UpdateAssignmentsRequest]
    ) -> None:
        await _write(req, request, data)

    # One operation id per path, generated from the handler's name: the four `authz_*` names below are kept,
    # because those ids (a wire shape) contain them. Their rule is the `opt`, as everywhere.
    @get([*_OBJECT_ASSIGNMENTS, *_TABULAR_ASSIGNMENTS], opt=requires(grants_reader))
    async def authz_get(self, object_id: FromPath[uuid.UUID], conn: NamedDependency[Connection]) -> AssignmentsResponse:
        return await _assignments(conn, object_id)

    @post([*_OBJECT_ASSIGNMENTS, *_TABULAR_ASSIGNMENTS], status_code=204, opt=requires(grants_changer))
    async def authz_update(
        self,
        req: NamedDependency[RequestScope],
        request: AnyRequest,
        object_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateAssignmentsRequest],
    ) -> None:
        await _write(req, request, data)

    @get(_EFFECTIVE, opt=requires(grants_reader))
    async def authz_get_effective(
        self, object_id: FromPath[uuid.UUID], conn: NamedDependency[Connection]
    ) -> EffectiveAssignmentsResponse:
        """Who has what on the object and where it comes from: its own grants and its containers' (the console's
        permissions tab). Read under the same rule as the object's own assignments: visible, and manage_grants or
        pass_grants on it (whoever may read the object's grants may read what its containers pass down to it).
        """
        rows = await permissions_queries.effective_assignments(conn, object_id)
        return EffectiveAssignmentsResponse(assignments=[_effective(*row) for row in rows])

    @get(_CONTAINERS, opt=requires(managed_access(change=False)))
    async def authz_get_managed_access(
        self, object_id: FromPath[uuid.UUID], conn: NamedDependency[Connection]
    ) -> ManagedAccessResponse:
        own, in_force = await permissions_queries.managed_access(conn, object_id)
        return ManagedAccessResponse(managed_access=own, managed_access_inherited=in_force and not own)

    @post(
        [f"{path}/managed-access" for path in _CONTAINERS], status_code=204, opt=requires(managed_access(change=True))
    )
    async def authz_set_managed_access(
        self,
        req: NamedDependency[RequestScope],
        request: AnyRequest,
        object_id: FromPath[uuid.UUID],
        data: JSONBody[ManagedAccess],
    ) -> None:
        container = path_object(request).kind
        await handle_set_managed_access(SetManagedAccess(container, object_id, data.managed_access, req.meta), req.ctx)

    @post("/check", status_code=200, operation_id="check", opt=requires(check_asker))
    async def check(
        self, req: NamedDependency[RequestScope], data: JSONBody[CheckRequest], conn: NamedDependency[Connection]
    ) -> CheckResponse:
        return await _check(conn, req.access, data)

    @post("/batch-check", status_code=200, operation_id="batch_check", opt=requires(batch_check_asker))
    async def batch_check(
        self, req: NamedDependency[RequestScope], data: JSONBody[BatchCheckRequest], conn: NamedDependency[Connection]
    ) -> BatchCheckResponse:
        return BatchCheckResponse(results=[await _check(conn, req.access, check) for check in data.checks])


async def _check(conn: Connection, access: ListingAccess, data: CheckRequest) -> CheckResponse:
    """The answer for the caller, or for `user` (the rule allowed asking about them)."""
    subject = access.principal
    if data.user is not None and data.user != subject.user_id:
        subject = Principal(user_id=data.user, name=data.user, authenticated=True)
    return CheckResponse(allowed=await access.authz.allowed(conn, subject, checked_object(data), data.privilege))


def _effective(principal: str, privilege: str, origin_kind: str, origin_id: uuid.UUID) -> EffectiveAssignment:
    who = assignment_of(principal, privilege)
    return EffectiveAssignment(
        type=privilege, origin_kind=origin_kind, origin_id=origin_id, user=who.user, role=who.role
    )
