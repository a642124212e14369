"""Lakekeeper's `/management/v1/permissions/...`: assignments per object, managed access, check and batch-check."""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.authorizer import Authorizer
from api.auth.principal import Principal
from api.auth.rules import in_handler, requires
from api.container import services
from api.dependencies import RequestScope
from api.management.access_checks import (
    assignment_of,
    principal_of,
    require_may_change,
    require_may_read,
    require_principals_exist,
    visible_object,
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
from catalog_es.errors import BadRequestError, NotAuthorizedError
from catalog_es.events.access import ObjectKind
from catalog_es.privileges import SERVER_OBJECT_ID
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.permissions import (
    ChangeAssignments,
    SetManagedAccess,
    handle_change_assignments,
    handle_set_managed_access,
)
from projections.permissions import queries as permissions_queries


async def _read(
    conn: Connection,
    state: State,
    principal: Principal,
    kind: ObjectKind,
    object_id: uuid.UUID,
    container_id: uuid.UUID | None = None,
) -> AssignmentsResponse:
    authz: Authorizer = services(state).authorizer
    if kind != "server":
        await visible_object(conn, authz, principal, kind, object_id, container_id)
    await require_may_read(conn, authz, principal, object_id)
    rows = await permissions_queries.assignments(conn, object_id)
    return AssignmentsResponse(assignments=[assignment_of(who, what) for who, what in rows])


async def _write(
    data: UpdateAssignmentsRequest,
    ctx: CommandContext,
    conn: Connection,
    state: State,
    principal: Principal,
    meta: EventMetadata,
    kind: ObjectKind,
    object_id: uuid.UUID,
    container_id: uuid.UUID | None = None,
) -> None:
    authz: Authorizer = services(state).authorizer
    if kind != "server":
        await visible_object(conn, authz, principal, kind, object_id, container_id)
    writes = [(principal_of(a), a.type) for a in data.writes]
    deletes = [(principal_of(a), a.type) for a in data.deletes]
    await require_may_change(conn, authz, principal, object_id, {p for _, p in writes + deletes})
    await require_principals_exist(conn, authz, principal, [who for who, _ in writes])
    await handle_change_assignments(ChangeAssignments(kind, object_id, writes, deletes, meta), ctx)


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

    @get("/server/assignments", operation_id="get_server_assignments", opt=requires(in_handler))
    async def get_server(
        self, req: NamedDependency[RequestScope], conn: NamedDependency[Connection], state: State
    ) -> AssignmentsResponse:
        return await _read(conn, state, req.principal, "server", SERVER_OBJECT_ID)

    @post("/server/assignments", status_code=204, operation_id="update_server_assignments", opt=requires(in_handler))
    async def update_server(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[UpdateAssignmentsRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        await _write(data, req.ctx, conn, state, req.principal, req.meta, "server", SERVER_OBJECT_ID)

    @get("/project/assignments", operation_id="get_project_assignments", opt=requires(in_handler))
    async def get_project(
        self, req: NamedDependency[RequestScope], conn: NamedDependency[Connection], state: State
    ) -> AssignmentsResponse:
        return await _read(conn, state, req.principal, "project", req.project_id)

    @post("/project/assignments", status_code=204, operation_id="update_project_assignments", opt=requires(in_handler))
    async def update_project(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[UpdateAssignmentsRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        await _write(data, req.ctx, conn, state, req.principal, req.meta, "project", req.project_id)

    # One operation id per path, generated from the handler's name: the four `authz_*` names below are kept,
    # because those ids (a wire shape) contain them. Their rule is the `opt`, as everywhere.
    @get([*_OBJECT_ASSIGNMENTS, *_TABULAR_ASSIGNMENTS], opt=requires(in_handler))
    async def authz_get(
        self,
        req: NamedDependency[RequestScope],
        request: AnyRequest,
        object_id: FromPath[uuid.UUID],
        conn: NamedDependency[Connection],
        state: State,
    ) -> AssignmentsResponse:
        return await _read(conn, state, req.principal, _kind(request), object_id, _warehouse(request))

    @post([*_OBJECT_ASSIGNMENTS, *_TABULAR_ASSIGNMENTS], status_code=204, opt=requires(in_handler))
    async def authz_update(
        self,
        req: NamedDependency[RequestScope],
        request: AnyRequest,
        object_id: FromPath[uuid.UUID],
        data: JSONBody[UpdateAssignmentsRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        await _write(
            data, req.ctx, conn, state, req.principal, req.meta, _kind(request), object_id, _warehouse(request)
        )

    @get(_EFFECTIVE, opt=requires(in_handler))
    async def authz_get_effective(
        self,
        req: NamedDependency[RequestScope],
        request: AnyRequest,
        object_id: FromPath[uuid.UUID],
        conn: NamedDependency[Connection],
        state: State,
    ) -> EffectiveAssignmentsResponse:
        """Who has what on the object and where it comes from: its own grants and its containers' (the console's
        permissions tab). Read under the same rule as the object's own assignments: visible, and manage_grants or
        pass_grants on it (whoever may read the object's grants may read what its containers pass down to it).
        """
        authz: Authorizer = services(state).authorizer
        await visible_object(conn, authz, req.principal, _kind(request), object_id, _warehouse(request))
        await require_may_read(conn, authz, req.principal, object_id)
        rows = await permissions_queries.effective_assignments(conn, object_id)
        return EffectiveAssignmentsResponse(assignments=[_effective(*row) for row in rows])

    @get(_CONTAINERS, opt=requires(in_handler))
    async def authz_get_managed_access(
        self,
        req: NamedDependency[RequestScope],
        request: AnyRequest,
        object_id: FromPath[uuid.UUID],
        conn: NamedDependency[Connection],
        state: State,
    ) -> ManagedAccessResponse:
        await visible_object(conn, services(state).authorizer, req.principal, _kind(request), object_id)
        own, in_force = await permissions_queries.managed_access(conn, object_id)
        return ManagedAccessResponse(managed_access=own, managed_access_inherited=in_force and not own)

    @post([f"{path}/managed-access" for path in _CONTAINERS], status_code=204, opt=requires(in_handler))
    async def authz_set_managed_access(
        self,
        req: NamedDependency[RequestScope],
        request: AnyRequest,
        object_id: FromPath[uuid.UUID],
        data: JSONBody[ManagedAccess],
        conn: NamedDependency[Connection],
        state: State,
    ) -> None:
        container = _kind(request)
        authz: Authorizer = services(state).authorizer
        await visible_object(conn, authz, req.principal, container, object_id)
        if not await authz.allowed(conn, req.principal, object_id, "manage_grants"):
            raise NotAuthorizedError("Setting managed access needs manage_grants")
        await handle_set_managed_access(SetManagedAccess(container, object_id, data.managed_access, req.meta), req.ctx)

    @post("/check", status_code=200, operation_id="check", opt=requires(in_handler))
    async def check(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[CheckRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> CheckResponse:
        return await _check(conn, state, req.principal, data)

    @post("/batch-check", status_code=200, operation_id="batch_check", opt=requires(in_handler))
    async def batch_check(
        self,
        req: NamedDependency[RequestScope],
        data: JSONBody[BatchCheckRequest],
        conn: NamedDependency[Connection],
        state: State,
    ) -> BatchCheckResponse:
        return BatchCheckResponse(results=[await _check(conn, state, req.principal, check) for check in data.checks])


async def _check(conn: Connection, state: State, principal: Principal, data: CheckRequest) -> CheckResponse:
    """Raises: NotAuthorizedError when asking about another user without manage_grants on the object."""
    authz: Authorizer = services(state).authorizer
    object_id = SERVER_OBJECT_ID if data.object_type == "server" else data.object_id
    if object_id is None:
        raise BadRequestError("object-id is required except for the server")
    if data.object_type != "server":  # the object must be what the request says it is, and visible
        await visible_object(conn, authz, principal, data.object_type, object_id)
    subject = principal
    if data.user is not None and data.user != principal.user_id:
        if not await authz.allowed(conn, principal, object_id, "manage_grants"):
            raise NotAuthorizedError("Checking another user's access needs manage_grants on the object")
        subject = Principal(user_id=data.user, name=data.user, authenticated=True)
    return CheckResponse(allowed=await authz.allowed(conn, subject, object_id, data.privilege))


def _effective(principal: str, privilege: str, origin_kind: str, origin_id: uuid.UUID) -> EffectiveAssignment:
    who = assignment_of(principal, privilege)
    return EffectiveAssignment(
        type=privilege, origin_kind=origin_kind, origin_id=origin_id, user=who.user, role=who.role
    )


def _warehouse(request: AnyRequest) -> uuid.UUID | None:
    """The warehouse a `/warehouse/{warehouse_id}/table|view/{object_id}` path names: the object must lie in it."""
    value = request.path_params.get("warehouse_id")
    return value if isinstance(value, uuid.UUID) else None


def _kind(request: AnyRequest) -> ObjectKind:
    """The object kind of a permissions path: `.../permissions/<kind>/<id>...` or `.../warehouse/<w>/<kind>/<id>...`."""
    parts = request.url.path.split("/permissions/", 1)[1].split("/")
    # The routes admit only object kinds in these places.
    return parts[2] if parts[0] == "warehouse" and len(parts) > 3 else parts[0]  # type: ignore[return-value]
