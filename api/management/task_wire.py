"""Task routes' bodies in Lakekeeper's shapes (`task/list`, `task/{id}`, `task/control`, `task-queue/.../config`)."""

from __future__ import annotations

import base64
import uuid
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

import msgspec

from api.management.wire import Request, Response
from catalog_es.errors import BadRequestError
from projections.task_views import AttemptRow, TaskRow

ApiStatus = Literal["SCHEDULED", "RUNNING", "STOPPING", "SUCCESS", "FAILED", "CANCELLED"]
# What each API status selects in the read model (`STOPPING` is Lakekeeper's; a cancelled task stops at once here).
STATUS_ROWS: dict[str, list[str]] = {
    "SCHEDULED": ["scheduled"],
    "RUNNING": ["running"],
    "STOPPING": [],
    "SUCCESS": ["success"],
    "FAILED": ["failed"],
    "CANCELLED": ["cancelled"],
}
MAX_FILTER_ITEMS = 100


class TaskEntity(msgspec.Struct, rename="kebab", kw_only=True, forbid_unknown_fields=True):
    """The object a task acts on: `{type: table, table-id, warehouse-id}` (or view, namespace …)."""

    type: str
    warehouse_id: uuid.UUID | None = None
    table_id: uuid.UUID | None = None
    view_id: uuid.UUID | None = None
    namespace_id: uuid.UUID | None = None

    def entity_id(self) -> uuid.UUID:
        """Raises: BadRequestError when the entity names no id."""
        found = self.table_id or self.view_id or self.namespace_id or self.warehouse_id
        if found is None:
            raise BadRequestError(f"Task entity of type {self.type!r} names no id")
        return found


class ListTasksRequest(Request):
    status: Annotated[list[ApiStatus], msgspec.Meta(max_length=6)] | None = None
    queue_name: Annotated[list[str], msgspec.Meta(max_length=MAX_FILTER_ITEMS)] | None = None
    entities: Annotated[list[TaskEntity], msgspec.Meta(max_length=MAX_FILTER_ITEMS)] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    page_token: str | None = None
    page_size: Annotated[int, msgspec.Meta(ge=1, le=1000)] = 100


class Task(Response):
    task_id: uuid.UUID
    warehouse_id: uuid.UUID
    queue_name: str
    entity: dict[str, Any]
    status: ApiStatus
    scheduled_for: datetime
    picked_up_at: datetime | None
    attempt: int
    last_heartbeat_at: datetime | None
    progress: float
    parent_task_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime | None
    scheduled_by: str


class ListTasksResponse(Response):
    tasks: list[Task]
    next_page_token: str | None = None


class TaskAttempt(Response):
    attempt: int
    status: ApiStatus
    scheduled_for: datetime | None
    started_at: datetime | None
    duration: str | None
    message: str | None
    created_at: datetime
    progress: float
    execution_details: dict[str, Any] | None
    worker: str


class GetTaskDetailsResponse(Task):
    task_data: dict[str, Any]
    execution_details: dict[str, Any] | None
    attempts: list[TaskAttempt]


class RunAt(msgspec.Struct, rename="kebab", tag_field="action-type", tag="run-at", forbid_unknown_fields=True):
    scheduled_for: datetime


class Cancel(msgspec.Struct, tag_field="action-type", tag="cancel", forbid_unknown_fields=True):
    pass


class Stop(msgspec.Struct, tag_field="action-type", tag="stop", forbid_unknown_fields=True):
    pass


class RunNow(msgspec.Struct, tag_field="action-type", tag="run-now", forbid_unknown_fields=True):
    pass


class ControlTasksRequest(Request):
    action: Cancel | Stop | RunNow | RunAt
    task_ids: Annotated[list[uuid.UUID], msgspec.Meta(max_length=MAX_FILTER_ITEMS)]


class SetTaskQueueConfigRequest(Request):
    queue_config: dict[str, Any]
    max_seconds_since_last_heartbeat: Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)] | None = None


class GetTaskQueueConfigResponse(Response):
    queue_config: dict[str, Any]  # the configuration with `queue-name` beside its keys, as Lakekeeper answers
    max_seconds_since_last_heartbeat: int | None


def _progress(row: TaskRow) -> float:
    if row.status == "success":
        return 1.0
    progress = row.progress or {}
    files = progress.get("files")  # a purge's plan; an import counts its actions in `total`
    total = len(files) if files else progress.get("total", 0)
    return round(min(1.0, progress.get("done", 0) / total), 4) if total else 0.0


def entity_of(row: TaskRow) -> dict[str, Any]:
    return {"type": row.entity_type, f"{row.entity_type}-id": str(row.entity_id), "warehouse-id": str(row.warehouse_id)}


def task_of(row: TaskRow) -> Task:
    return Task(
        task_id=row.task_id,
        warehouse_id=row.warehouse_id,
        queue_name=row.queue,
        entity=entity_of(row),
        status=msgspec.convert(row.status.upper(), ApiStatus),
        scheduled_for=row.due_at,
        picked_up_at=row.picked_up_at,
        attempt=row.attempt,
        last_heartbeat_at=row.heartbeat_at if row.status == "running" else None,
        progress=_progress(row),
        parent_task_id=None,
        created_at=row.created_at,
        updated_at=row.updated_at,
        scheduled_by=row.scheduled_by,
    )


def _duration(attempt: AttemptRow) -> str | None:
    if attempt.ended_at is None:
        return None
    seconds: timedelta = attempt.ended_at - attempt.started_at
    return f"PT{seconds.total_seconds():.3f}S"


def details_of(row: TaskRow, attempts: list[AttemptRow]) -> GetTaskDetailsResponse:
    task = msgspec.structs.asdict(task_of(row))
    progress = {k: v for k, v in (row.progress or {}).items() if k != "files"} or None
    return GetTaskDetailsResponse(
        **task,
        task_data=row.payload,
        execution_details=progress,
        attempts=[
            TaskAttempt(
                attempt=a.attempt,
                status=msgspec.convert(a.status.upper(), ApiStatus),
                scheduled_for=None,
                started_at=a.started_at,
                duration=_duration(a),
                message=a.message,
                created_at=a.started_at,
                progress=1.0 if a.status == "success" else 0.0,
                execution_details=a.result,
                worker=a.worker,
            )
            for a in attempts
        ],
    )


def page_token(row: TaskRow) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode([row.created_at, row.task_id])).decode()


def parse_page_token(token: str) -> tuple[datetime, uuid.UUID]:
    """Raises: BadRequestError for a token this server did not hand out."""
    try:
        created_at, task_id = msgspec.json.decode(
            base64.urlsafe_b64decode(token.encode()), type=tuple[datetime, uuid.UUID]
        )
    except (ValueError, msgspec.DecodeError):
        raise BadRequestError(f"Invalid page-token {token[:64]!r}") from None
    return created_at, task_id
