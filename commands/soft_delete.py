"""Soft drops: hide a table, a view or a namespace tree, and schedule its `tabular_expiration` task.

The name of a soft-dropped tabular is free at once (Lakekeeper's behaviour): a new table or view may take it,
and undropping the old one then needs a new name. Its location and id stay its own until it expires.
"""

from __future__ import annotations

import uuid

from catalog_es.events import Event, NamespaceDropped
from catalog_es.events.lifecycle import NamespaceSoftDropped
from catalog_es.state import NamespaceRow, TabularRow, WarehouseRow
from catalog_es.store.eventstore import Transaction
from catalog_es.tabular_kind import TABLE, VIEW, SoftDrop, kind_named
from commands.context import CommandContext
from commands.task_handlers import TABULAR_EXPIRATION
from commands.tasks import NewTask, schedule_task


def soft_expiration_seconds(warehouse: WarehouseRow) -> int | None:
    """The hold of a soft-delete warehouse; None when its drops are hard."""
    profile = warehouse.delete_profile
    return int(profile["expiration-seconds"]) if profile.get("type") == "soft" else None


async def _schedule(
    tx: Transaction, ctx: CommandContext, warehouse: WarehouseRow, entity_type: str, entity_id: uuid.UUID, due: int
) -> uuid.UUID:
    task = NewTask(
        queue=TABULAR_EXPIRATION,
        warehouse_id=warehouse.id,
        entity_type=entity_type,
        entity_id=entity_id,
        payload={},
        due_at_ms=due,
    )
    return await schedule_task(tx, ctx, task)


async def soft_drop_tabular(
    tx: Transaction, ctx: CommandContext, warehouse: WarehouseRow, row: TabularRow, *, purge: bool, seconds: int
) -> None:
    """Hide `row` in `tx` and schedule its expiration in the same transaction."""
    due = ctx.now_ms() + seconds * 1000
    task_id = await _schedule(tx, ctx, warehouse, row.kind, row.id, due)
    drop = SoftDrop(
        tabular_id=row.id,
        warehouse_id=row.warehouse_id,
        namespace_id=row.namespace_id,
        name=row.name,
        expires_at_ms=due,
        purge_requested=purge,
        expiration_task_id=task_id,
    )
    event = kind_named(row.kind).soft_dropped(drop)
    await tx.append(event, expected_version=row.version)


async def drop_namespace_tree(
    tx: Transaction, ctx: CommandContext, warehouse: WarehouseRow, root: NamespaceRow, *, purge: bool
) -> None:
    """Drop `root` with every table, view and namespace below it: hidden on a soft-delete warehouse (one task,
    the root's, expires the whole tree; `purge` then applies to its tables), else dropped for good, files kept
    (Iceberg's dropNamespace has no purge)."""
    state = ctx.deleted()
    tree = await state.live_subtree(tx.conn, warehouse.id, root.namespace.key)
    seconds = soft_expiration_seconds(warehouse)
    events: list[tuple[Event, int]] = []
    members = [(TABLE, m) for m in tree.tables] + [(VIEW, m) for m in tree.views]
    if seconds is None:
        events += [(kind.dropped(m.id, warehouse.id, purge=False), m.version) for kind, m in members]
        events += [(NamespaceDropped(namespace_id=m.id, warehouse_id=warehouse.id), m.version) for m in tree.namespaces]
    else:
        due = ctx.now_ms() + seconds * 1000
        task_id = await _schedule(tx, ctx, warehouse, "namespace", root.id, due)
        for kind, m in members:
            drop = SoftDrop(
                tabular_id=m.id,
                warehouse_id=warehouse.id,
                namespace_id=m.namespace_id,
                name=m.name,
                expires_at_ms=due,
                purge_requested=purge,
                with_namespace=root.id,
            )
            events.append((kind.soft_dropped(drop), m.version))
        for m in tree.namespaces:
            is_root = m.id == root.id
            namespace = NamespaceSoftDropped(
                namespace_id=m.id,
                warehouse_id=warehouse.id,
                namespace=m.parts,
                expires_at_ms=due,
                with_namespace=None if is_root else root.id,
                expiration_task_id=task_id if is_root else None,
            )
            events.append((namespace, m.version))
    for event, version in events:
        await tx.append(event, expected_version=version)
