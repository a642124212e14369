"""The `tabular_expiration` task: a soft-dropped table, view or namespace tree whose hold ran out goes for good."""

from __future__ import annotations

from typing import Any

from catalog_es.events.lifecycle import NamespaceExpired
from catalog_es.soft_delete import DeletedTabularRow
from catalog_es.store.eventstore import Transaction
from catalog_es.store.task_queue import Task
from catalog_es.tabular_kind import kind_named
from commands.context import CommandContext
from commands.tabular_purge import purge_task
from commands.tasks import WORKER_METADATA, schedule_task
from commands.warehouse_hold import expire_held_warehouse


async def expire_soft_dropped(task: Task, ctx: CommandContext) -> dict[str, Any]:
    """Expire what the task names, if it is still the drop this task was scheduled for (an undrop, or an undrop
    and a new drop, leaves it nothing to do); purges are scheduled in the same transaction, one per table
    dropped with `purge_requested`. Running twice is harmless: the second run finds nothing hidden."""
    if task.entity_type == "warehouse":
        return await expire_held_warehouse(task, ctx)
    state = ctx.deleted()
    async with ctx.store.transaction(WORKER_METADATA) as tx:
        if task.entity_type == "namespace":
            root = await state.deleted_namespace(tx.conn, task.warehouse_id, task.entity_id)
            if root is None or root.expiration_task_id != task.task_id:
                return {"expired": [], "reason": "not soft-dropped by this task's drop any more"}
            tabulars, namespaces = await state.deleted_with(tx.conn, root.id)
            purges = [await _expire_tabular(tx, ctx, row) for row in tabulars]
            for member in reversed(namespaces):  # deepest first
                event = NamespaceExpired(namespace_id=member.id, warehouse_id=task.warehouse_id)
                await tx.append(event, expected_version=member.version)
            expired = [str(row.id) for row in tabulars] + [str(member.id) for member in namespaces]
        else:
            row = await state.deleted_tabular(tx.conn, task.warehouse_id, task.entity_id)
            if row is None or row.expiration_task_id != task.task_id:
                return {"expired": [], "reason": "not soft-dropped by this task's drop any more"}
            purges = [await _expire_tabular(tx, ctx, row)]
            expired = [str(row.id)]
    return {"expired": expired, "purges": [str(task_id) for task_id in purges if task_id is not None]}


async def _expire_tabular(tx: Transaction, ctx: CommandContext, row: DeletedTabularRow) -> Any:
    kind = kind_named(row.kind)
    event = kind.expired(row.id, row.warehouse_id, purge=row.purge_requested)
    await tx.append(event, expected_version=row.version)
    if not (kind.purgeable and row.purge_requested):
        return None
    return await schedule_task(tx, ctx, purge_task(row.warehouse_id, row))
