"""Privilege use cases: change the assignments on an object, set managed access, make a server admin."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Event
from catalog_es.events.access import ManagedAccessSet, ObjectKind, PrivilegeGranted, PrivilegeRevoked
from catalog_es.privileges import SERVER_OBJECT_ID, user_principal, valid_privilege
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext

Assignment = tuple[str, str]  # (principal `user:<id>` | `role:<uuid>`, privilege)


class ChangeAssignments(msgspec.Struct, frozen=True):
    """Grant `writes` and revoke `deletes` on one object (what it holds now is read by the handler)."""

    object_kind: ObjectKind
    object_id: uuid.UUID
    writes: Sequence[Assignment]
    deletes: Sequence[Assignment]
    metadata: EventMetadata


class SetManagedAccess(msgspec.Struct, frozen=True):
    object_kind: ObjectKind
    object_id: uuid.UUID
    enabled: bool
    metadata: EventMetadata


def server_admin_assigned_event(user_id: str, *, operator: bool = False) -> Event:
    """The event making `user_id` the server's admin (or operator), for a caller's own transaction."""
    return PrivilegeGranted(
        object_kind="server",
        object_id=SERVER_OBJECT_ID,
        principal=user_principal(user_id),
        privilege="operator" if operator else "admin",
    )


def _validate(kind: ObjectKind, assignments: Sequence[Assignment]) -> None:
    for principal, privilege in assignments:
        if not valid_privilege(kind, privilege):
            raise BadRequestError(f"{privilege!r} is not a privilege on a {kind}")
        if not principal.startswith(("user:", "role:")) or principal in ("user:", "role:"):
            raise BadRequestError(f"Assignments name a user or a role, not {principal!r}")
        if principal == f"role:{SERVER_OBJECT_ID}":
            raise BadRequestError("Not a role")


async def handle_change_assignments(cmd: ChangeAssignments, ctx: CommandContext) -> int:
    """Record one event per real change (no-ops are skipped); returns how many were recorded.

    What the object holds is read inside the write transaction, so a concurrent change cannot make a
    recorded grant a duplicate or a recorded revoke a no-op.

    Raises: BadRequestError for a privilege the object kind does not have or a malformed principal.
    """
    _validate(cmd.object_kind, [*cmd.writes, *cmd.deletes])
    async with ctx.store.transaction(cmd.metadata) as tx:
        changes = _changes(cmd, set(await ctx.access.assignments(tx.conn, cmd.object_id)))
        if changes:
            version = await tx.stream_version(changes[0].stream_id)
            for offset, event in enumerate(changes):
                await tx.append(event, expected_version=version + offset)
    return len(changes)


def _changes(cmd: ChangeAssignments, held: set[Assignment]) -> list[Event]:
    changes: list[Event] = []
    for principal, privilege in dict.fromkeys(cmd.deletes):
        if (principal, privilege) in held:
            held.discard((principal, privilege))
            changes.append(
                PrivilegeRevoked(
                    object_kind=cmd.object_kind, object_id=cmd.object_id, principal=principal, privilege=privilege
                )
            )
    for principal, privilege in dict.fromkeys(cmd.writes):
        if (principal, privilege) not in held:
            held.add((principal, privilege))
            changes.append(
                PrivilegeGranted(
                    object_kind=cmd.object_kind, object_id=cmd.object_id, principal=principal, privilege=privilege
                )
            )
    return changes


async def handle_set_managed_access(cmd: SetManagedAccess, ctx: CommandContext) -> None:
    """Raises: BadRequestError for an object other than a warehouse or namespace."""
    if cmd.object_kind not in ("warehouse", "namespace"):
        raise BadRequestError("Managed access is set on warehouses and namespaces")
    event = ManagedAccessSet(object_kind=cmd.object_kind, object_id=cmd.object_id, enabled=cmd.enabled)
    async with ctx.store.transaction(cmd.metadata) as tx:
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))
