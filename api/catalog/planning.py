"""Server-side scan planning (spec 1.11): planTableScan, fetchPlanningResult, cancelPlanning, fetchScanTasks."""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
import uuid
from typing import Any

import msgspec
from litestar import Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException
from litestar.params import FromPath
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil

from api.auth.principal import request_principal
from api.auth.rules import requires
from api.catalog.credentials import (
    DelegationHeader,
    VendingTarget,
    credentials_path,
    delegated,
    policy_target,
    vending_backend,
)
from api.catalog.rules import on_warehouse_only
from api.container import services
from api.dependencies import RequestScope, parse_namespace
from api.encoded_slash import decode_name
from api.errors import error_model
from catalog_es.errors import BadRequestError, NoSuchPlanIdError, NoSuchPlanTaskError, NoSuchTableError
from catalog_es.planning.cache import PlanKey, PlanState
from catalog_es.planning.plan_ids import PlanClaim
from catalog_es.planning.planner import PlannedScan, plan_scan, resolve_snapshot
from catalog_es.planning.policy import ReadPolicy
from catalog_es.planning.request import ScanRequest
from catalog_es.planning.service import PlanningBusyError, ScanPlanning
from catalog_es.state import TabularRow
from projections.permissions.read_policies import read_policy_for

_TABLE = "/{prefix:str}/namespaces/{namespace:str}/tables/{table:str}"
_TOKEN_PREFIX = "pt1."  # noqa: S105 - a format tag, not a secret
_RETRY_AFTER_SECONDS = 1  # a busy planner's advice to the client (503)


class _FetchScanTasks(msgspec.Struct, frozen=True, rename="kebab"):
    plan_task: str


class _PlanTask(msgspec.Struct, frozen=True, array_like=True):
    """What a plan task names: the table, the request with its snapshot pinned, the page. Not the policy: it is
    applied again for whoever fetches, so a token handed to another principal plans nothing more for them."""

    table_id: uuid.UUID
    request: str
    page: int


class _Resolved(msgspec.Struct, frozen=True):
    row: TabularRow
    policy: ReadPolicy | None


async def _resolve(req: RequestScope, request: Request[Any, Any, Any], namespace: str, table: str) -> _Resolved:
    """The table, resolved once, the read decided on it (hidden: as missing), and the caller's read policy.

    Raises: NoSuchTableError (missing or hidden), NotAuthorizedError (visible, no `select`).
    """
    ident = parse_namespace(namespace)
    authz, principal = services(request.app.state).authorizer, request_principal(request.scope)
    async with req.ctx.store.connection() as conn:
        row = await req.read_model.table(conn, req.warehouse.id, ident, decode_name(table))
        missing = NoSuchTableError(f"Table does not exist: {ident}.{table}")
        if row is None:
            raise missing
        await authz.require(conn, principal, row.id, "select", missing)
        policy = await read_policy_for(conn, row.id, principal.user_id, principal.roles) if authz.enabled else None
    return _Resolved(row, policy)


def _metadata(row: TabularRow) -> TableMetadata:
    return TableMetadataUtil.parse_obj(row.metadata)


def _decode_request(raw: bytes) -> ScanRequest:
    """Raises: BadRequestError for a body that is not a PlanTableScanRequest."""
    try:
        return msgspec.json.decode(raw or b"{}", type=ScanRequest).validated()
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid PlanTableScanRequest: {exc}") from None
    except msgspec.DecodeError as exc:
        raise BadRequestError(f"A PlanTableScanRequest must be a JSON object: {exc}") from None


async def _start(
    req: RequestScope, planning: ScanPlanning, resolved: _Resolved, scan: ScanRequest
) -> tuple[PlanKey, asyncio.Future[PlannedScan]]:
    metadata = _metadata(resolved.row)
    pinned = resolve_snapshot(metadata, scan)
    fingerprint = "" if resolved.policy is None else resolved.policy.fingerprint()
    key: PlanKey = (resolved.row.id, pinned.key(), fingerprint)
    storage = await req.ctx.storage(req.warehouse)
    location, policy, page_size = resolved.row.location, resolved.policy, planning.page_size

    def work() -> PlannedScan:
        return plan_scan(metadata, storage.file_io(location), pinned, policy, page_size)

    try:
        return key, planning.start(key, work)
    except PlanningBusyError as busy:  # the spec's ServiceUnavailableResponse; the client retries
        raise HTTPException(str(busy), status_code=503, headers={"Retry-After": str(_RETRY_AFTER_SECONDS)}) from None


async def _find(
    req: RequestScope, request: Request[Any, Any, Any], resolved: _Resolved, plan_id: str, *, revive: bool
) -> PlanState | None:
    """The caller's plan on this table: this process's, else (when `revive`) planned again from a plan-id another
    replica signed. None for an unknown, forged, spent, another caller's or another table's id, or one whose
    read policy has changed since: all answer alike (404), and the client plans again."""
    planning, principal = services(request.app.state).planning, request_principal(request.scope).user_id
    policy = "" if resolved.policy is None else resolved.policy.fingerprint()
    state = planning.registry.find(plan_id, principal, resolved.row.id)
    if state is not None or planning.registry.spent(plan_id):
        return state if state is None or state.key[2] == policy else None
    claim = _claim(req, planning, resolved, plan_id, principal)
    if claim is None or not revive:
        return None
    try:
        scan = msgspec.json.decode(claim.request, type=ScanRequest).validated()
        key, job = await _start(req, planning, resolved, scan)
    except (msgspec.ValidationError, msgspec.DecodeError, BadRequestError):  # e.g. the snapshot has expired since
        return None
    state = PlanState(principal, resolved.row.id, key, job)
    planning.registry.add(plan_id, state)
    return state


def _claim(
    req: RequestScope, planning: ScanPlanning, resolved: _Resolved, plan_id: str, principal: str
) -> PlanClaim | None:
    """The signed claim of `plan_id` when it names this warehouse, table, caller and the caller's policy now."""
    claim = planning.ids.read(plan_id)
    policy = "" if resolved.policy is None else resolved.policy.fingerprint()
    if claim is None or (claim.warehouse_id, claim.table_id) != (req.warehouse.id, resolved.row.id):
        return None
    return claim if (claim.principal, claim.policy) == (principal, policy) else None


def _token(key: PlanKey, page: int) -> str:
    encoded = msgspec.json.encode(_PlanTask(key[0], key[1].decode(), page))
    return _TOKEN_PREFIX + base64.urlsafe_b64encode(encoded).decode().rstrip("=")


def _completed(plan: PlannedScan, key: PlanKey, plan_id: str | None, credentials: list[Any] | None) -> bytes:
    """The first page with the plan tasks for the others (and the plan id, and storage credentials)."""
    extra: dict[str, Any] = {"status": "completed", "plan-tasks": [_token(key, n) for n in range(1, len(plan.pages))]}
    if plan_id is not None:
        extra["plan-id"] = plan_id
    if credentials:
        extra["storage-credentials"] = credentials
    return plan.pages[0][:-1] + b"," + msgspec.json.encode(extra)[1:]


async def _storage_credentials(
    req: RequestScope, request: Request[Any, Any, Any], resolved: _Resolved, header: str | None
) -> list[Any] | None:
    """Credentials for the plan's files when the client asks for vended ones: read-only on the table's location,
    or under a read policy on its policy's files only (`policy_target`), where every file of its plans is."""
    backend = await vending_backend(req, header)
    if backend is None:
        return None
    if resolved.policy is not None:
        target = policy_target(backend, resolved.row.location, resolved.policy)
    else:
        target = VendingTarget(backend, resolved.row.location, "read")
    access = await delegated(
        req, request, target, credentials_path(request).replace("/plan/credentials", "/credentials")
    )
    return [msgspec.to_builtins(credential) for credential in access.storage_credentials or []]


@post(f"{_TABLE}/plan", status_code=200, opt=requires(on_warehouse_only))
async def plan_table_scan(
    req: NamedDependency[RequestScope],
    request: Request[Any, Any, Any],
    namespace: FromPath[str],
    table: FromPath[str],
    delegation: DelegationHeader = None,
) -> Response[bytes]:
    """Completed when the plan is ready within `sync_seconds` (cached plans at once), else submitted with a
    plan-id to poll; a plan-id always comes back, as the spec asks, and is the caller's only.

    Raises:
        NoSuchTableError, NotAuthorizedError: see `_resolve`; also a policy hiding a selected or filtered column.
        BadRequestError: a malformed request, an unknown snapshot or column.
    """
    scan = _decode_request(await request.body())
    resolved = await _resolve(req, request, namespace, table)
    planning = services(request.app.state).planning
    key, job = await _start(req, planning, resolved, scan)
    principal = request_principal(request.scope).user_id
    claim = PlanClaim(req.warehouse.id, key[0], key[1].decode(), key[2], principal, secrets.token_urlsafe(12))
    plan_id = planning.ids.issue(claim)
    planning.registry.add(plan_id, PlanState(principal, resolved.row.id, key, job))
    try:
        plan = await asyncio.wait_for(asyncio.shield(job), planning.sync_seconds)
    except TimeoutError:
        return _json(msgspec.json.encode({"status": "submitted", "plan-id": plan_id}))
    except BaseException:
        planning.registry.remove(plan_id)
        raise
    credentials = await _storage_credentials(req, request, resolved, delegation)
    return _json(_completed(plan, key, plan_id, credentials))


@get(f"{_TABLE}/plan/{{plan_id:str}}", opt=requires(on_warehouse_only))
async def fetch_planning_result(
    req: NamedDependency[RequestScope],
    request: Request[Any, Any, Any],
    namespace: FromPath[str],
    table: FromPath[str],
    plan_id: FromPath[str],
    delegation: DelegationHeader = None,
) -> Response[bytes]:
    """Any replica answers: one that does not hold the plan plans it again from its signed id.

    Raises: NoSuchPlanIdError for an unknown id, or one of another caller or table (answered alike).
    """
    resolved = await _resolve(req, request, namespace, table)
    planning = services(request.app.state).planning
    state = await _find(req, request, resolved, plan_id, revive=True)
    if state is None:
        raise NoSuchPlanIdError(f"Plan {plan_id!r} does not exist")
    if state.job.cancelled():
        return _json(b'{"status":"cancelled"}')
    if not state.job.done():
        return _json(b'{"status":"submitted"}')
    error = state.job.exception()
    if error is not None:  # reported once, then the plan-id is spent
        planning.registry.remove(plan_id)
        return _json(msgspec.json.encode({"status": "failed", "error": error_model(error)}))
    credentials = await _storage_credentials(req, request, resolved, delegation)
    return _json(_completed(state.job.result(), state.key, None, credentials))


@delete(f"{_TABLE}/plan/{{plan_id:str}}", status_code=204, opt=requires(on_warehouse_only))
async def cancel_planning(
    req: NamedDependency[RequestScope],
    request: Request[Any, Any, Any],
    namespace: FromPath[str],
    table: FromPath[str],
    plan_id: FromPath[str],
) -> None:
    """Stops the planning on this replica and spends the id here (another replica would plan it again).

    Raises: NoSuchPlanIdError as `fetch_planning_result`.
    """
    resolved = await _resolve(req, request, namespace, table)
    planning = services(request.app.state).planning
    state = await _find(req, request, resolved, plan_id, revive=False)
    principal = request_principal(request.scope).user_id
    if planning.registry.spent(plan_id) or (
        state is None and _claim(req, planning, resolved, plan_id, principal) is None
    ):
        raise NoSuchPlanIdError(f"Plan {plan_id!r} does not exist")
    planning.registry.remove(plan_id)


@post(f"{_TABLE}/tasks", status_code=200, opt=requires(on_warehouse_only))
async def fetch_scan_tasks(
    req: NamedDependency[RequestScope],
    request: Request[Any, Any, Any],
    namespace: FromPath[str],
    table: FromPath[str],
) -> Response[bytes]:
    """One page of a plan: from the cache, else planned again (the token names a snapshot, which never changes).

    Raises: NoSuchPlanTaskError for a token this catalog did not hand out for this table.
    """
    try:
        body = msgspec.json.decode(await request.body(), type=_FetchScanTasks)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise BadRequestError(f"Invalid FetchScanTasksRequest: {exc}") from None
    task = _decode_token(body.plan_task)
    resolved = await _resolve(req, request, namespace, table)
    if task.table_id != resolved.row.id:
        raise NoSuchPlanTaskError("Plan task does not exist")
    try:
        scan = msgspec.json.decode(task.request, type=ScanRequest).validated()
    except (msgspec.ValidationError, msgspec.DecodeError, BadRequestError):
        raise NoSuchPlanTaskError("Plan task does not exist") from None
    planning = services(request.app.state).planning
    _, job = await _start(req, planning, resolved, scan)
    plan = await job
    if not 0 < task.page < len(plan.pages):
        raise NoSuchPlanTaskError("Plan task does not exist")
    return _json(plan.pages[task.page])


def _decode_token(token: str) -> _PlanTask:
    """Raises: NoSuchPlanTaskError for anything that is not a plan task of this catalog."""
    if not token.startswith(_TOKEN_PREFIX):
        raise NoSuchPlanTaskError("Plan task does not exist")
    body = token.removeprefix(_TOKEN_PREFIX)
    try:
        return msgspec.json.decode(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)), type=_PlanTask)
    except (binascii.Error, ValueError, msgspec.ValidationError, msgspec.DecodeError):
        raise NoSuchPlanTaskError("Plan task does not exist") from None


def _json(body: bytes) -> Response[bytes]:
    return Response(body, media_type="application/json")


PLANNING_ROUTES = [plan_table_scan, fetch_planning_result, cancel_planning, fetch_scan_tasks]
