"""Maintenance policies and table health (issue 22) under /management/v1/warehouse/{warehouse-id}/...

`PUT|DELETE …/policy/{policy-type}` on the warehouse, `…/namespace/{namespace-id}/…` and `…/table/{table-id}/…`
(setting or removing one needs `modify` on the object); `GET …/table/{table-id}/policies` (the effective
policies and where each comes from) and `GET …/table/{table-id}/health` need `describe` on the table.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec
from litestar import Request, delete, get, put
from litestar.di import NamedDependency
from litestar.params import FromPath

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.maintenance_rules import on_maintained_object
from catalog_es.errors import NoSuchPolicyError, NoSuchTableError
from catalog_es.maintenance.health import LastRun, commits_since_all
from catalog_es.maintenance.jobs import InheritedFrom, PolicyLevel
from catalog_es.maintenance.policy_types import DataCompaction, encode_policy
from catalog_es.maintenance.triggers import due_jobs, nearest_policies
from commands.maintenance_policies import (
    RemovePolicy,
    SetPolicy,
    handle_remove_policy,
    handle_set_policy,
    missing_object,
)
from projections.maintenance.queries import MaintenanceReadModel

_STATE = MaintenanceReadModel()
_WAREHOUSE = "/warehouse/{warehouse_id:uuid}"
_OBJECT_PATHS: dict[PolicyLevel, str] = {
    "warehouse": _WAREHOUSE,
    "namespace": f"{_WAREHOUSE}/namespace/{{namespace_id:uuid}}",
    "table": f"{_WAREHOUSE}/table/{{table_id:uuid}}",
}
_TABLE = _OBJECT_PATHS["table"]
AnyRequest = Request[Any, Any, Any]


class PolicyResponse(msgspec.Struct, rename="kebab"):
    policy_type: str
    inherited_from: InheritedFrom
    content: dict[str, Any]
    inherited: bool = False


class PoliciesResponse(msgspec.Struct, rename="kebab"):
    policies: list[PolicyResponse]


class DueJob(msgspec.Struct, rename="kebab"):
    policy_type: str
    trigger: dict[str, Any]


class TableHealthResponse(msgspec.Struct, rename="kebab"):
    """The figures the triggers read; `small-files` counts files under the effective compaction policy's
    threshold (`small-file-threshold-bytes`, Iceberg's default when none applies)."""

    table_id: uuid.UUID
    warehouse_id: uuid.UUID
    data_files: int
    delete_files: int
    records: int
    data_bytes: int
    small_files: int
    small_file_threshold_bytes: int
    snapshot_count: int
    oldest_snapshot_ms: int | None
    manifest_count: int
    manifest_count_estimated: bool
    commits: int
    commits_since_maintenance: dict[str, int]
    last_maintenance: dict[str, LastRun]
    last_commit_ms: int
    due: list[DueJob]


def _object(kind: PolicyLevel, params: dict[str, Any]) -> uuid.UUID:
    return uuid.UUID(str(params["warehouse_id" if kind == "warehouse" else f"{kind}_id"]))


def _routes(kind: PolicyLevel) -> list[Any]:
    path = f"{_OBJECT_PATHS[kind]}/policy/{{policy_type:str}}"

    @put(path, status_code=200, name=f"set_{kind}_policy", opt=requires(on_maintained_object(kind, "modify")))
    async def set_policy(
        req: NamedDependency[RequestScope], request: AnyRequest, policy_type: FromPath[str]
    ) -> PolicyResponse:
        """Declare the object's policy of this type (replacing its own, overriding inherited ones).

        Raises: BadRequestError (unknown type, content not valid for it), the object's not-found error.
        """
        object_id, warehouse_id = _object(kind, request.path_params), request.path_params["warehouse_id"]
        command = SetPolicy(
            object_kind=kind,
            object_id=object_id,
            warehouse_id=warehouse_id,
            policy_type=policy_type,
            content=await request.body(),
            metadata=req.meta,
        )
        content = await handle_set_policy(command, req.ctx, _STATE)
        return PolicyResponse(policy_type, InheritedFrom(kind, object_id), content)

    @delete(path, status_code=204, name=f"remove_{kind}_policy", opt=requires(on_maintained_object(kind, "modify")))
    async def remove_policy(
        req: NamedDependency[RequestScope], request: AnyRequest, policy_type: FromPath[str]
    ) -> None:
        """Raises: NoSuchPolicyError when the object declares none of this type."""
        command = RemovePolicy(
            object_kind=kind,
            object_id=_object(kind, request.path_params),
            warehouse_id=request.path_params["warehouse_id"],
            policy_type=policy_type,
            metadata=req.meta,
        )
        await handle_remove_policy(command, req.ctx, _STATE)

    @get(path, name=f"get_{kind}_policy", opt=requires(on_maintained_object(kind, "describe")))
    async def get_policy(
        req: NamedDependency[RequestScope], request: AnyRequest, policy_type: FromPath[str]
    ) -> PolicyResponse:
        """The object's own policy of this type. Raises: NoSuchPolicyError, the object's not-found error."""
        object_id = _object(kind, request.path_params)
        async with req.ctx.store.connection() as conn:
            if not await _STATE.object_in_warehouse(conn, kind, object_id, request.path_params["warehouse_id"]):
                raise missing_object(kind, object_id)
            content = await _STATE.declared_policy(conn, object_id, policy_type)
        if content is None:
            raise NoSuchPolicyError(f"No {policy_type} policy is declared on {kind} {object_id}")
        return PolicyResponse(policy_type, InheritedFrom(kind, object_id), content)

    return [set_policy, remove_policy, get_policy]


async def _effective(req: RequestScope, warehouse_id: uuid.UUID, table_id: uuid.UUID) -> list[PolicyResponse]:
    async with req.ctx.store.connection() as conn:
        if not await _STATE.object_in_warehouse(conn, "table", table_id, warehouse_id):
            raise NoSuchTableError(f"Table {table_id} does not exist")
        declared = (await _STATE.declared_for_tables(conn, [table_id]))[table_id]
    return [
        PolicyResponse(p.policy_type, p.inherited_from, encode_policy(p.content), p.inherited_from.id != table_id)
        for p in nearest_policies(declared)
    ]


@get(f"{_TABLE}/policies", opt=requires(on_maintained_object("table", "describe")))
async def table_policies(
    req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], table_id: FromPath[uuid.UUID]
) -> PoliciesResponse:
    """The policies in force on the table, one per type: its own, else its nearest namespace's, else the
    warehouse's. Raises: NoSuchTableError."""
    return PoliciesResponse(await _effective(req, warehouse_id, table_id))


@get(f"{_TABLE}/health", opt=requires(on_maintained_object("table", "describe")))
async def table_health(
    req: NamedDependency[RequestScope], warehouse_id: FromPath[uuid.UUID], table_id: FromPath[uuid.UUID]
) -> TableHealthResponse:
    """The table's figures up to the latest commit (the view is brought to the log head first), and the
    maintenance jobs its policies make due now. Raises: NoSuchTableError."""
    async with req.ctx.store.connection() as conn:
        if not await _STATE.object_in_warehouse(conn, "table", table_id, warehouse_id):
            raise NoSuchTableError(f"Table {table_id} does not exist")
        await _STATE.catch_up(conn)
        health = await _STATE.health(conn, table_id)
        declared = (await _STATE.declared_for_tables(conn, [table_id]))[table_id]
        queued = (await _STATE.queued_jobs(conn, [table_id])).get(table_id, set())
    if health is None:
        raise NoSuchTableError(f"Table {table_id} does not exist")
    policies = nearest_policies(declared)
    threshold = DataCompaction(enable=False).small_threshold()  # Iceberg's default when no compaction policy applies
    for policy in policies:
        if isinstance(policy.content, DataCompaction):
            threshold = policy.content.small_threshold()
    due = due_jobs(health, policies, req.ctx.now_ms(), active=queued)
    return TableHealthResponse(
        table_id=health.table_id,
        warehouse_id=health.warehouse_id,
        data_files=health.data_files,
        delete_files=health.delete_files,
        records=health.records,
        data_bytes=health.data_bytes,
        small_files=health.small_files(threshold),
        small_file_threshold_bytes=threshold,
        snapshot_count=health.snapshot_count,
        oldest_snapshot_ms=health.oldest_snapshot_ms,
        manifest_count=health.manifest_count,
        manifest_count_estimated=health.manifest_count_estimated,
        commits=health.commits,
        commits_since_maintenance=commits_since_all(health),
        last_maintenance=health.last_runs,
        last_commit_ms=health.last_commit_ms,
        due=[DueJob(job.policy_type, job.trigger) for job in due],
    )


MAINTENANCE_ROUTES = [
    *_routes("warehouse"),
    *_routes("namespace"),
    *_routes("table"),
    table_policies,
    table_health,
]
