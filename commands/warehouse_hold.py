"""A forced warehouse deletion held back for `CATALOG_ES__WAREHOUSE_DELETE_HOLD_SECONDS`: undelete, or expire.

While held, the warehouse is gone for every route (its name is free) but nothing inside it is dropped; its
`tabular_expiration` task (entity type `warehouse`) then drops the contents and deletes it, as an unheld forced
deletion does at once. Undeleting brings it back with everything inside and every grant.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, NoSuchWarehouseError
from catalog_es.events import Event, NamespaceDropped, WarehouseDeleted
from catalog_es.events.lifecycle import (
    NamespaceExpired,
    WarehouseSoftDeleted,
    WarehouseUndeleted,
)
from catalog_es.state import WarehouseRow
from catalog_es.storage.file_roots import storage_overlaps
from catalog_es.store.eventstore import EventMetadata, Transaction
from catalog_es.store.task_queue import Task
from catalog_es.tabular_kind import TABLE, VIEW, kind_named
from commands.context import CommandContext
from commands.projects import validate_display_name
from commands.task_handlers import TABULAR_EXPIRATION
from commands.tasks import WORKER_METADATA, NewTask, cancel_unless_ended, schedule_task


class UndeleteWarehouse(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    metadata: EventMetadata
    name: str | None = None  # None: the name it had (refused when another warehouse took it meanwhile)


async def hold_warehouse(tx: Transaction, ctx: CommandContext, row: WarehouseRow) -> None:
    """Hide a warehouse being deleted with `force`, in the deletion's transaction, for the hold period."""
    due = ctx.now_ms() + ctx.warehouse_hold_seconds * 1000
    task = NewTask(
        queue=TABULAR_EXPIRATION,
        warehouse_id=row.id,
        entity_type="warehouse",
        entity_id=row.id,
        payload={},
        due_at_ms=due,
    )
    task_id = await schedule_task(tx, ctx, task)
    event = WarehouseSoftDeleted(
        warehouse_id=row.id, project_id=row.project_id, name=row.name, expires_at_ms=due, expiration_task_id=task_id
    )
    await tx.append(event, expected_version=row.version)


async def handle_undelete_warehouse(cmd: UndeleteWarehouse, ctx: CommandContext) -> str:
    """Bring a held warehouse back; returns its name.

    Raises:
        NoSuchWarehouseError: no warehouse of this id is held.
        AlreadyExistsError: another warehouse of the project took the name (pass a new `name`).
        BadRequestError: an invalid name, or another warehouse overlaps its storage location meanwhile.
    """
    async with ctx.store.transaction(cmd.metadata) as tx:
        held = await ctx.deleted().deleted_warehouse(tx.conn, cmd.warehouse_id)
        if held is None:
            raise NoSuchWarehouseError(f"No deleted warehouse {cmd.warehouse_id} is held")
        name = validate_display_name(cmd.name, "Warehouse") if cmd.name is not None else held.name
        if await ctx.state.warehouse_by_name(tx.conn, held.project_id, name) is not None:
            raise AlreadyExistsError(f"A warehouse named {name!r} exists in the project: pass a new 'name'")
        if any(storage_overlaps(row.location, held.location) for row in await ctx.state.all_warehouses(tx.conn)):
            raise BadRequestError(f"Another warehouse took storage location {held.location} meanwhile")
        event = WarehouseUndeleted(warehouse_id=held.id, project_id=held.project_id, name=name)
        await tx.append(event, expected_version=held.version)
    if held.expiration_task_id is not None:
        await cancel_unless_ended(ctx, held.expiration_task_id, cmd.metadata)
    return name


async def expire_held_warehouse(task: Task, ctx: CommandContext) -> dict[str, Any]:
    """Drop what the held warehouse holds (files kept, as a forced deletion does) and delete it for good."""
    state = ctx.deleted()
    async with ctx.store.transaction(WORKER_METADATA) as tx:
        held = await state.deleted_warehouse(tx.conn, task.entity_id)
        if held is None or held.expiration_task_id != task.task_id:
            return {"expired": [], "reason": "not held by this task's deletion any more"}
        contents = await ctx.state.warehouse_contents(tx.conn, held.id)
        hidden_tabulars, hidden_namespaces = await state.hidden_in_warehouse(tx.conn, held.id)
        events: list[tuple[Event, int]] = [
            (kind_named(row.kind).expired(row.id, held.id, purge=False), row.version) for row in hidden_tabulars
        ]
        events += [(TABLE.dropped(i, held.id, purge=False), v) for i, v in contents.tables]
        events += [(VIEW.dropped(i, held.id, purge=False), v) for i, v in contents.views]
        events += [(NamespaceExpired(namespace_id=n.id, warehouse_id=held.id), n.version) for n in hidden_namespaces]
        events += [(NamespaceDropped(namespace_id=i, warehouse_id=held.id), v) for i, v in contents.namespaces]
        for event, version in events:
            await tx.append(event, expected_version=version)
        if held.credential_id is not None:
            await ctx.secret_store().delete(tx.conn, held.credential_id)
        await tx.append(
            WarehouseDeleted(warehouse_id=held.id, project_id=held.project_id), expected_version=held.version
        )
    return {"expired": [str(held.id)], "dropped": len(events)}
