"""Policy use cases (issue 22): declare a maintenance policy on a warehouse, namespace or table, or remove it."""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from catalog_es.errors import (
    BadRequestError,
    CatalogError,
    NoSuchNamespaceError,
    NoSuchPolicyError,
    NoSuchTableError,
    NoSuchWarehouseError,
)
from catalog_es.events.maintenance import PolicyRemoved, PolicySet
from catalog_es.maintenance.jobs import PolicyLevel
from catalog_es.maintenance.policy_types import PolicyContentError, decode_policy, encode_policy
from catalog_es.maintenance.ports import MaintenanceState
from catalog_es.store.eventstore import EventMetadata, Transaction
from commands.context import CommandContext


class SetPolicy(msgspec.Struct, frozen=True, kw_only=True):
    object_kind: PolicyLevel
    object_id: uuid.UUID
    warehouse_id: uuid.UUID
    policy_type: str
    content: bytes  # the request body, checked here against the type
    metadata: EventMetadata


class RemovePolicy(msgspec.Struct, frozen=True, kw_only=True):
    object_kind: PolicyLevel
    object_id: uuid.UUID
    warehouse_id: uuid.UUID
    policy_type: str
    metadata: EventMetadata


def missing_object(kind: PolicyLevel, object_id: uuid.UUID) -> CatalogError:
    """The not-found error of an object a policy route names."""
    if kind == "warehouse":
        return NoSuchWarehouseError(f"Warehouse {object_id} does not exist")
    if kind == "namespace":
        return NoSuchNamespaceError(f"Namespace {object_id} does not exist")
    return NoSuchTableError(f"Table {object_id} does not exist")


async def _stream_version(
    tx: Transaction, state: MaintenanceState, kind: PolicyLevel, object_id: uuid.UUID, warehouse_id: uuid.UUID
) -> int:
    if not await state.object_in_warehouse(tx.conn, kind, object_id, warehouse_id):
        raise missing_object(kind, object_id)
    return await tx.stream_version(f"policy-{object_id}")


async def handle_set_policy(cmd: SetPolicy, ctx: CommandContext, state: MaintenanceState) -> dict[str, Any]:
    """Declare (or replace) the object's policy of this type; returns the content stored, defaults filled in.

    Raises: BadRequestError (unknown type, invalid content), NoSuchWarehouseError, NoSuchNamespaceError,
    NoSuchTableError (the object is not in the warehouse), WarehouseInactiveError.
    """
    try:
        content = encode_policy(decode_policy(cmd.policy_type, cmd.content))
    except PolicyContentError as error:
        raise BadRequestError(str(error)) from None
    await ctx.warehouse(cmd.warehouse_id)
    async with ctx.store.transaction(cmd.metadata) as tx:
        version = await _stream_version(tx, state, cmd.object_kind, cmd.object_id, cmd.warehouse_id)
        event = PolicySet(
            object_kind=cmd.object_kind,
            object_id=cmd.object_id,
            warehouse_id=cmd.warehouse_id,
            policy_type=cmd.policy_type,
            content=content,
        )
        await tx.append(event, expected_version=version)
    return content


async def handle_remove_policy(cmd: RemovePolicy, ctx: CommandContext, state: MaintenanceState) -> None:
    """Remove the object's own policy of this type (an inherited one applies again).

    Raises: NoSuchPolicyError (the object declares none of that type), the object's not-found error,
    WarehouseInactiveError.
    """
    await ctx.warehouse(cmd.warehouse_id)
    async with ctx.store.transaction(cmd.metadata) as tx:
        version = await _stream_version(tx, state, cmd.object_kind, cmd.object_id, cmd.warehouse_id)
        if await state.declared_policy(tx.conn, cmd.object_id, cmd.policy_type) is None:
            raise NoSuchPolicyError(f"No {cmd.policy_type} policy is declared on {cmd.object_kind} {cmd.object_id}")
        event = PolicyRemoved(
            object_kind=cmd.object_kind,
            object_id=cmd.object_id,
            warehouse_id=cmd.warehouse_id,
            policy_type=cmd.policy_type,
        )
        await tx.append(event, expected_version=version)
