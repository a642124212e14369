"""Undrop: bring soft-dropped tables, views and namespace trees back, with their grants, before they expire."""

from __future__ import annotations

import uuid
from typing import Literal

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, InvalidLocationError, NoSuchNamespaceError
from catalog_es.events import Event
from catalog_es.events.lifecycle import NamespaceUndropped
from catalog_es.identifiers import Namespace
from catalog_es.soft_delete import DeletedTabularRow
from catalog_es.store.eventstore import EventMetadata, Transaction
from catalog_es.tabular_kind import kind_named
from commands.context import CommandContext
from commands.name_conflicts import require_name_free, undrop_target_taken
from commands.tasks import cancel_unless_ended

TargetKind = Literal["table", "view", "namespace"]


class UndropTarget(msgspec.Struct, frozen=True):
    kind: TargetKind
    id: uuid.UUID
    name: str | None = None  # a table or view: the name to come back under (None: the one it had)


class UndropTabulars(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    targets: list[UndropTarget]
    metadata: EventMetadata


class Undropped(msgspec.Struct, frozen=True):
    kind: TargetKind
    id: uuid.UUID
    namespace: list[str]
    name: str


async def handle_undrop_tabulars(cmd: UndropTabulars, ctx: CommandContext) -> list[Undropped]:
    """Undrop every target in one transaction (all or nothing), then cancel their expiration tasks.

    A namespace target brings back the namespace tree its recursive drop hid, with every table and view in it;
    a table or view hidden with its namespace comes back only with it.

    Raises:
        NoSuchTableError, NoSuchViewError, NoSuchNamespaceError: no such soft-dropped object in the warehouse.
        AlreadyExistsError: the name (or the namespace) is taken meanwhile; a table or view then needs `name`.
        BadRequestError: a table or view hidden with its namespace, or an invalid `name`.
        InvalidLocationError: another table claimed the location or the id meanwhile.
    """
    restored: list[Undropped] = []
    tasks: list[uuid.UUID] = []
    async with ctx.store.transaction(cmd.metadata) as tx:
        for target in cmd.targets:
            if target.kind == "namespace":
                restored += await _undrop_namespace(tx, ctx, cmd.warehouse_id, target.id, tasks)
            else:
                restored.append(await _undrop_tabular(tx, ctx, cmd.warehouse_id, target, tasks))
    for task_id in tasks:
        await cancel_unless_ended(ctx, task_id, cmd.metadata)
    return restored


async def _undrop_tabular(
    tx: Transaction, ctx: CommandContext, warehouse_id: uuid.UUID, target: UndropTarget, tasks: list[uuid.UUID]
) -> Undropped:
    kind = kind_named(target.kind)
    row = await ctx.deleted().deleted_tabular(tx.conn, warehouse_id, target.id)
    if row is None or row.kind != target.kind:
        raise kind.missing_error(f"No soft-dropped {kind.name} with id {target.id}")
    if row.with_namespace is not None:
        raise BadRequestError(
            f"{kind.title} {target.id} was dropped with its namespace: undrop namespace {row.with_namespace} instead"
        )
    name = target.name if target.name is not None else row.name
    kind.validate_name(name)
    namespace = Namespace(tuple(row.namespace))
    taken = undrop_target_taken(kind, target.id)
    await require_name_free(ctx, tx.conn, warehouse_id, namespace, row.namespace_id, name, taken=taken)
    if kind.claims_location:
        await _require_unclaimed(tx, ctx, row)
    await tx.append(_undropped(row, name), expected_version=row.version)
    if row.expiration_task_id is not None:
        tasks.append(row.expiration_task_id)
    return Undropped(target.kind, row.id, row.namespace, name)


async def _require_unclaimed(tx: Transaction, ctx: CommandContext, row: DeletedTabularRow) -> None:
    """Raises: InvalidLocationError when a table registered meanwhile holds its id or overlaps its location."""
    if await ctx.state.table_id_taken(tx.conn, row.id):
        raise InvalidLocationError(f"Another table took the id {row.id} meanwhile")
    if await ctx.state.location_taken(tx.conn, row.warehouse_id, row.location, except_table=row.id):
        raise InvalidLocationError(f"Another table took the location {row.location} meanwhile")


def _undropped(row: DeletedTabularRow, name: str) -> Event:
    return kind_named(row.kind).undropped(row.id, row.warehouse_id, row.namespace_id, name, from_name=row.name)


async def _undrop_namespace(
    tx: Transaction, ctx: CommandContext, warehouse_id: uuid.UUID, namespace_id: uuid.UUID, tasks: list[uuid.UUID]
) -> list[Undropped]:
    root = await ctx.deleted().deleted_namespace(tx.conn, warehouse_id, namespace_id)
    if root is None:
        raise NoSuchNamespaceError(f"No soft-dropped namespace with id {namespace_id}")
    if root.with_namespace is not None:
        raise BadRequestError(f"Namespace {namespace_id} was dropped with {root.with_namespace}: undrop that one")
    namespace = Namespace(tuple(root.parts))
    if namespace.parent is not None and await ctx.state.namespace(tx.conn, warehouse_id, namespace.parent) is None:
        raise NoSuchNamespaceError(f"Cannot undrop {namespace}: its parent namespace does not exist")
    if await ctx.state.namespace(tx.conn, warehouse_id, namespace) is not None:
        raise AlreadyExistsError(f"Cannot undrop namespace {namespace}: a namespace by that name exists")
    tabulars, namespaces = await ctx.deleted().deleted_with(tx.conn, root.id)
    restored: list[Undropped] = []
    for member in namespaces:  # shallowest first: parents before children
        event = NamespaceUndropped(namespace_id=member.id, warehouse_id=warehouse_id, namespace=member.parts)
        await tx.append(event, expected_version=member.version)
        restored.append(Undropped("namespace", member.id, member.parts[:-1], member.parts[-1]))
    for row in tabulars:  # their names were hidden with the tree, so none is taken
        await tx.append(_undropped(row, row.name), expected_version=row.version)
        restored.append(Undropped(row.kind, row.id, row.namespace, row.name))
    if root.expiration_task_id is not None:
        tasks.append(root.expiration_task_id)
    return restored
