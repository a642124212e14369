"""Task routes (issue 17 §3, Lakekeeper's shapes): list, inspect and control a warehouse's tasks; queue configs.

Every route needs `modify` on the warehouse (data admins, owners and modifiers): task payloads name table
locations, and controlling a task changes what happens to a table's files. A task of another warehouse answers
404 like a missing one.
"""

from __future__ import annotations

import uuid

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody

from api.auth.rules import requires
from api.dependencies import RequestScope
from api.management.rules import on_warehouse
from api.management.task_wire import (
    STATUS_ROWS,
    Cancel,
    ControlTasksRequest,
    GetTaskDetailsResponse,
    GetTaskQueueConfigResponse,
    ListTasksRequest,
    ListTasksResponse,
    RunAt,
    RunNow,
    SetTaskQueueConfigRequest,
    details_of,
    page_token,
    parse_page_token,
    task_of,
)
from catalog_es.clock import millis
from catalog_es.errors import BadRequestError, NoSuchTaskError, TaskFinishedError
from catalog_es.store.database import Connection
from catalog_es.store.task_queue import FINISHED
from commands.task_handlers import CATALOG_IMPORT, MAINTENANCE, METADATA_CLEANUP, TABULAR_EXPIRATION, TABULAR_PURGE
from commands.tasks import cancel_task, configure_task_queue, reschedule_task
from projections.task_views import TaskFilter, list_tasks, queue_config, task_details

QUEUES = (TABULAR_PURGE, TABULAR_EXPIRATION, METADATA_CLEANUP, MAINTENANCE, CATALOG_IMPORT)
MANAGE = on_warehouse("modify")


def _known_queue(queue: str) -> str:
    if queue not in QUEUES:
        raise BadRequestError(f"Queue {queue!r} not found! Existing queues: [{', '.join(QUEUES)}]")
    return queue


class TasksController(Controller):
    path = "/warehouse/{warehouse_id:uuid}"

    @post("/task/list", status_code=200, opt=requires(MANAGE))
    async def list_warehouse_tasks(
        self, conn: NamedDependency[Connection], warehouse_id: FromPath[uuid.UUID], data: JSONBody[ListTasksRequest]
    ) -> ListTasksResponse:
        """The warehouse's tasks, newest first, filtered; `next-page-token` continues the same request."""
        statuses = None if data.status is None else [row for s in data.status for row in STATUS_ROWS[s]]
        entities = None if data.entities is None else [entity.entity_id() for entity in data.entities]
        where = TaskFilter(
            statuses=statuses,
            queues=data.queue_name,
            entity_ids=entities,
            created_after=data.created_after,
            created_before=data.created_before,
            after=parse_page_token(data.page_token) if data.page_token else None,
        )
        rows = await list_tasks(conn, [warehouse_id], where, data.page_size + 1)
        more = len(rows) > data.page_size
        rows = rows[: data.page_size]
        return ListTasksResponse(
            tasks=[task_of(row) for row in rows], next_page_token=page_token(rows[-1]) if more else None
        )

    @get(["/task/{task_id:uuid}", "/task/by-id/{task_id:uuid}"], opt=requires(MANAGE))  # by-id: Lakekeeper's
    async def get_task(
        self, conn: NamedDependency[Connection], warehouse_id: FromPath[uuid.UUID], task_id: FromPath[uuid.UUID]
    ) -> GetTaskDetailsResponse:
        """One task with every attempt (worker, times, outcome).

        Raises:
            NoSuchTaskError: not a task of this warehouse.
        """
        found = await task_details(conn, [warehouse_id], task_id)
        if found is None:
            raise NoSuchTaskError(f"Task with id {task_id} not found")
        return details_of(*found)

    @post("/task/control", status_code=204, opt=requires(MANAGE))
    async def control_tasks(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        data: JSONBody[ControlTasksRequest],
    ) -> None:
        """`cancel` and `stop` end a waiting or running task; `run-now` / `run-at` move a waiting one's time.

        Raises:
            NoSuchTaskError: one of the tasks is not this warehouse's (nothing is changed then).
            TaskFinishedError: one of them already ended (nothing is changed then).
        """
        task_ids = list(dict.fromkeys(data.task_ids))
        async with req.ctx.store.connection() as conn:  # released before the commands take their own
            for task_id in task_ids:  # all checked before any is changed
                found = await task_details(conn, [warehouse_id], task_id)
                if found is None:
                    raise NoSuchTaskError(f"Task with id {task_id} not found")
                if found[0].status in FINISHED:
                    raise TaskFinishedError(f"Task {task_id} already ended ({found[0].status})")
        for task_id in task_ids:
            match data.action:
                case RunNow():
                    await reschedule_task(req.ctx, task_id, req.ctx.now_ms(), req.meta)
                case RunAt(scheduled_for=moment):
                    await reschedule_task(req.ctx, task_id, millis(moment), req.meta)
                case Cancel() | _:
                    await cancel_task(req.ctx, task_id, req.meta)

    @get("/task-queue/{queue_name:str}/config", opt=requires(MANAGE))
    async def get_queue_config(
        self, conn: NamedDependency[Connection], warehouse_id: FromPath[uuid.UUID], queue_name: FromPath[str]
    ) -> GetTaskQueueConfigResponse:
        """The warehouse's configuration of the queue (empty until set)."""
        config, heartbeat = await queue_config(conn, warehouse_id, _known_queue(queue_name))
        return GetTaskQueueConfigResponse(
            queue_config={**config, "queue-name": queue_name}, max_seconds_since_last_heartbeat=heartbeat
        )

    @post("/task-queue/{queue_name:str}/config", status_code=204, opt=requires(MANAGE))
    async def set_queue_config(
        self,
        req: NamedDependency[RequestScope],
        warehouse_id: FromPath[uuid.UUID],
        queue_name: FromPath[str],
        data: JSONBody[SetTaskQueueConfigRequest],
    ) -> None:
        """Record the warehouse's configuration of the queue (an event, with its actor)."""
        await configure_task_queue(
            req.ctx,
            warehouse_id,
            _known_queue(queue_name),
            data.queue_config,
            data.max_seconds_since_last_heartbeat,
            req.meta,
        )
